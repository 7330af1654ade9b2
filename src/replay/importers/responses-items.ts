import { appendMessage, textBlock, type Block, type Message } from '../conversation.ts'

type Json = Record<string, unknown>

/** What converting a list of Responses API items left out, for the report's notes. */
export interface ItemTally {
  reasoning: number
  unknown: Set<string>
}

export function emptyTally(): ItemTally {
  return { reasoning: 0, unknown: new Set() }
}

/**
 * Appends one Responses API input item (what Codex records and resends) to a neutral history:
 * messages as text, function and custom tool calls as tool_use, their outputs as tool_result.
 */
export function appendResponsesItem(messages: Message[], item: Json, tally: ItemTally): void {
  const type = item['type']
  if (type === 'message') {
    const text = contentText(item['content'])
    if (!text) return
    appendMessage(messages, { role: item['role'] === 'assistant' ? 'assistant' : 'user', content: [textBlock(text)] })
  } else if (type === 'function_call' || type === 'custom_tool_call' || type === 'local_shell_call') {
    appendMessage(messages, { role: 'assistant', content: [toolUseOf(item)] })
  } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    const output = item['output']
    const content = typeof output === 'string' ? output : contentText(outputItems(output))
    appendMessage(messages, {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: String(item['call_id'] ?? ''), content }],
    })
  } else if (type === 'reasoning') {
    // Encrypted or summarised reasoning: its size is not recoverable from the log.
    tally.reasoning++
  } else if (type !== 'compaction' && type !== 'ghost_snapshot') {
    tally.unknown.add(String(type))
  }
}

function toolUseOf(item: Json): Block {
  const id = String(item['call_id'] ?? item['id'] ?? '')
  if (item['type'] === 'local_shell_call') {
    const action = (item['action'] as Json | undefined) ?? {}
    return { type: 'tool_use', id, name: 'local_shell', input: { command: action['command'] ?? [] } }
  }
  if (item['type'] === 'custom_tool_call')
    return { type: 'tool_use', id, name: String(item['name'] ?? 'tool'), input: { input: String(item['input'] ?? '') } }
  let input: unknown
  try {
    input = JSON.parse(String(item['arguments'] ?? '{}'))
  } catch {
    input = { arguments: String(item['arguments'] ?? '') }
  }
  return { type: 'tool_use', id, name: String(item['name'] ?? 'tool'), input }
}

/** A function output is a string, `{content}` (older Codex) or a list of content items. */
function outputItems(output: unknown): unknown {
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) return (output as Json)['content']
  return output
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as Json[])
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : part['type'] === 'input_image' ? '[image]' : ''))
    .join('')
}

export function tallyNotes(tally: ItemTally): string[] {
  return [
    ...(tally.reasoning > 0
      ? [`${tally.reasoning} reasoning item(s) left out (encrypted in the log; their size is unknown)`]
      : []),
    ...(tally.unknown.size > 0 ? [`item types not replayed: ${[...tally.unknown].join(', ')}`] : []),
  ]
}
