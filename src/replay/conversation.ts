/**
 * ctxgate's own recorded-conversation format: what one agent sent, provider-neutral. Content
 * blocks use the Anthropic Messages shapes (text, image, tool_use, tool_result), which every
 * importer can express and both wire formats can be built from.
 */
export type Block =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly source: unknown }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: unknown }
  | {
      readonly type: 'tool_result'
      readonly tool_use_id: string
      readonly content: string | readonly Block[]
      readonly is_error?: boolean
    }
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'redacted_thinking'; readonly data: string }

export interface Message {
  readonly role: 'user' | 'assistant'
  readonly content: readonly Block[]
}

export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly input_schema: Record<string, unknown>
}

/** What the recording itself says the run cost, when it says (Claude Code's final `result`). */
export interface RecordedUsage {
  /** Model requests the agent itself recorded, when its log counts them. */
  readonly requests?: number
  readonly inputTokens?: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
  readonly outputTokens?: number
  readonly costUsd?: number
}

export interface Conversation {
  readonly id: string
  readonly source: string
  readonly model: string
  readonly system: string
  readonly tools: readonly ToolDefinition[]
  /**
   * The message history the agent sent, one list per stretch between compactions: after a
   * compaction the agent started over from a summary, so the next requests extend a new list.
   */
  readonly segments: readonly (readonly Message[])[]
  readonly recordedUsage?: RecordedUsage
  /** What the importer had to assume or drop, for the report. */
  readonly notes: readonly string[]
}

export const conversationFormat = 'ctxgate.conversation.v1'

/** Header line then one line per message: easy to stream, diff and append to. */
export function toJsonl(conversation: Conversation): string {
  const { segments, ...header } = conversation
  const lines = [JSON.stringify({ type: 'conversation', format: conversationFormat, ...header })]
  segments.forEach((messages, index) => {
    if (index > 0) lines.push(JSON.stringify({ type: 'compaction' }))
    for (const message of messages) lines.push(JSON.stringify({ type: 'message', ...message }))
  })
  return `${lines.join('\n')}\n`
}

/** Appends a message, merging it into the previous one when the roles match (as the APIs do). */
export function appendMessage(messages: Message[], message: Message): void {
  if (message.content.length === 0) return
  const last = messages[messages.length - 1]
  if (last && last.role === message.role) {
    const content = [...last.content, ...message.content]
    // Tool results go first in a user message, as the Messages API requires.
    if (message.role === 'user')
      content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'))
    messages[messages.length - 1] = { role: last.role, content }
  } else messages.push(message)
}

export function textBlock(text: string): Block {
  return { type: 'text', text }
}
