/**
 * A recorded run as the requests an OpenAI client sends, request k carrying everything before the
 * k-th assistant reply: Chat Completions, or Responses with the system prompt as `instructions` (as
 * SDK clients send it) or as a leading developer message (as Codex sends it). Parallel tool calls
 * stay one assistant turn with several calls.
 */
import type { Block, Conversation, Message } from '../src/replay/conversation.ts'

type Json = Record<string, unknown>
export type Format = 'chat' | 'responses/instructions' | 'responses/developer'

function chatMessages(messages: readonly Message[]): Json[] {
  const out: Json[] = []
  for (const message of messages) {
    const texts = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : []))
    if (message.role === 'assistant') {
      const calls = message.content.flatMap((block) =>
        block.type === 'tool_use'
          ? [{ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } }]
          : [],
      )
      out.push({
        role: 'assistant',
        content: texts.length > 0 ? texts.join('\n') : null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      })
      continue
    }
    for (const block of message.content)
      if (block.type === 'tool_result')
        out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: resultText(block.content) })
    if (texts.length > 0) out.push({ role: 'user', content: texts.join('\n') })
  }
  return out
}

function responsesItems(messages: readonly Message[]): Json[] {
  const out: Json[] = []
  for (const message of messages)
    for (const block of message.content) {
      if (block.type === 'text' && message.role === 'user')
        out.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: block.text }] })
      else if (block.type === 'text')
        out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: block.text }] })
      else if (block.type === 'tool_use')
        out.push({ type: 'function_call', call_id: block.id, name: block.name, arguments: JSON.stringify(block.input) })
      else if (block.type === 'tool_result')
        out.push({ type: 'function_call_output', call_id: block.tool_use_id, output: resultText(block.content) })
    }
  return out
}

function resultText(content: string | readonly Block[]): string {
  if (typeof content === 'string') return content
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n')
}

/** Request k carries everything before the k-th assistant reply of its segment, as the agent sent it. */
export function requestsFor(
  conversation: Conversation,
  format: Format,
  model = 'gpt-5.5',
): { path: string; body: Json }[] {
  const tools = conversation.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.input_schema,
  }))
  const key = `bench-${conversation.id}`.slice(0, 64)
  return conversation.segments.flatMap((messages) =>
    messages.flatMap((message, position): { path: string; body: Json }[] => {
      if (message.role !== 'assistant' || position === 0) return []
      const history = messages.slice(0, position)
      if (format === 'chat') {
        const system = conversation.system ? [{ role: 'system', content: conversation.system }] : []
        return [
          {
            path: '/v1/chat/completions',
            body: {
              model,
              prompt_cache_key: key,
              messages: [...system, ...chatMessages(history)],
              tools: tools.map((tool) => ({ type: 'function', function: tool })),
            },
          },
        ]
      }
      const developer =
        format === 'responses/developer' && conversation.system
          ? [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: conversation.system }] }]
          : []
      return [
        {
          path: '/v1/responses',
          body: {
            model,
            prompt_cache_key: key,
            store: false,
            ...(format === 'responses/instructions' && conversation.system
              ? { instructions: conversation.system }
              : {}),
            input: [...developer, ...responsesItems(history)],
            tools: tools.map((tool) => ({ type: 'function', ...tool })),
          },
        },
      ]
    }),
  )
}
