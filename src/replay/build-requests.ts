import type { Block, Conversation, Message } from './conversation.ts'

export type ClientCache = 'none' | 'rolling' | 'tight' | 'full'

export const clientCaches: readonly ClientCache[] = ['none', 'rolling', 'tight', 'full']

export interface RequestOptions {
  /** Model name sent; defaults to the recording's own. */
  readonly model?: string
  readonly maxTokens: number
  /**
   * How the agent marks its own prompt cache: not at all; system + newest block; or `tight`, the end of
   * the tools as well, which leaves ctxgate one of the four slots (Claude Code marks two system blocks
   * and its newest block); or `full`, the newest two messages as well, which leaves ctxgate none
   * (opencode marks its first two system messages and its newest two).
   */
  readonly clientCache: ClientCache
  readonly stream: boolean
}

export interface ReplayRequest {
  /** 1-based position in the run. */
  readonly index: number
  readonly segment: number
  readonly body: Record<string, unknown>
}

/**
 * The requests the agent sent: request k holds everything before the k-th assistant reply of its
 * segment, in the Anthropic Messages wire format.
 */
export function buildAnthropicRequests(conversation: Conversation, options: RequestOptions): ReplayRequest[] {
  const requests: ReplayRequest[] = []
  const tools: Record<string, unknown>[] = conversation.tools.map((tool) => ({ ...tool }))
  const lastTool = tools[tools.length - 1]
  if ((options.clientCache === 'tight' || options.clientCache === 'full') && lastTool)
    tools[tools.length - 1] = { ...lastTool, cache_control: { type: 'ephemeral' } }
  conversation.segments.forEach((messages, segment) => {
    messages.forEach((message, position) => {
      if (message.role !== 'assistant' || position === 0) return
      const history = messages.slice(0, position)
      const marked = options.clientCache !== 'none'
      const body: Record<string, unknown> = {
        model: options.model ?? conversation.model,
        max_tokens: options.maxTokens,
        ...(conversation.system
          ? {
              system: [
                {
                  type: 'text',
                  text: conversation.system,
                  ...(marked ? { cache_control: { type: 'ephemeral' } } : {}),
                },
              ],
            }
          : {}),
        ...(tools.length > 0 ? { tools } : {}),
        messages: !marked
          ? history
          : options.clientCache === 'full'
            ? markNewestTwo(history)
            : markNewestBlock(history),
        ...(options.stream ? { stream: true } : {}),
      }
      requests.push({ index: requests.length + 1, segment, body })
    })
  })
  return requests
}

/** A breakpoint on each of the newest two messages (their last block that may carry one). */
function markNewestTwo(history: readonly Message[]): readonly Message[] {
  if (history.length < 2) return markNewestBlock(history)
  const marked = markNewestBlock(history.slice(0, -1))
  return markNewestBlock([...marked, history[history.length - 1] as Message])
}

/** A rolling breakpoint on the newest block that may carry one (not thinking, not empty text). */
function markNewestBlock(history: readonly Message[]): readonly Message[] {
  const last = history[history.length - 1]
  if (!last) return history
  const content = [...last.content]
  for (let index = content.length - 1; index >= 0; index--) {
    const block = content[index] as Block
    if (
      block.type === 'thinking' ||
      block.type === 'redacted_thinking' ||
      (block.type === 'text' && block.text.trim() === '')
    )
      continue
    content[index] = { ...block, cache_control: { type: 'ephemeral' } } as unknown as Block
    return [...history.slice(0, -1), { role: last.role, content }]
  }
  return history
}
