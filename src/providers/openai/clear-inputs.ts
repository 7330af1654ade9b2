import type { ClearableInput } from '../../rewrite/cleared-input.ts'
import type { Edit } from '../../rewrite/types.ts'
import { isJsonObject, type Json } from '../../util/json.ts'
import { inputClears } from '../input-clears.ts'

/** A Chat call's input as it can be cleared: a function's JSON `arguments`, a custom tool's free-text `input`. */
export function chatClearable(call: Json): ClearableInput | undefined {
  const fn = call['function']
  if (isJsonObject(fn) && typeof fn['arguments'] === 'string') return { form: 'json', value: fn['arguments'] }
  const custom = call['custom']
  if (isJsonObject(custom) && typeof custom['input'] === 'string') return { form: 'text', value: custom['input'] }
  return undefined
}

/** A Responses call item's input as it can be cleared: `arguments` (JSON), `input` (free text), a shell call's `action`. */
export function responsesClearable(item: Json): ClearableInput | undefined {
  if (item['type'] === 'function_call' && typeof item['arguments'] === 'string')
    return { form: 'json', value: item['arguments'] }
  if (item['type'] === 'custom_tool_call' && typeof item['input'] === 'string')
    return { form: 'text', value: item['input'] }
  if (item['type'] === 'local_shell_call' && isJsonObject(item['action']))
    return { form: 'object', value: item['action'] }
  return undefined
}

/**
 * Chat messages with the cleared inputs of their tool calls written in; id, type and name stay, and the
 * client's objects where nothing changed. `messages` is the adapter's own list, handed back when nothing is cleared.
 */
export function chatWithClearedInputs(messages: Json[], edits: readonly Edit[]): Json[] {
  const clears = inputClears(edits)
  if (clears.size === 0) return messages
  return messages.map((message) => {
    if (!Array.isArray(message['tool_calls'])) return message
    let changed = false
    const calls = (message['tool_calls'] as unknown[]).map((call) => {
      if (!isJsonObject(call)) return call
      const input = clears.get(String(call['id']))
      const field = isJsonObject(call['function']) ? 'function' : isJsonObject(call['custom']) ? 'custom' : undefined
      if (input === undefined || field === undefined) return call
      changed = true
      return { ...call, [field]: { ...(call[field] as Json), [field === 'function' ? 'arguments' : 'input']: input } }
    })
    return changed ? { ...message, tool_calls: calls } : message
  })
}

/** Responses items with the cleared inputs of their call items written in; call_id, name and the rest stay. `items` is the adapter's own list, handed back when nothing is cleared. */
export function responsesWithClearedInputs(items: Json[], edits: readonly Edit[]): Json[] {
  const clears = inputClears(edits)
  if (clears.size === 0) return items
  return items.map((item) => {
    const input = clears.get(String(item['call_id']))
    if (input === undefined) return item
    if (item['type'] === 'function_call') return { ...item, arguments: input }
    if (item['type'] === 'custom_tool_call') return { ...item, input }
    if (item['type'] === 'local_shell_call') return { ...item, action: input }
    return item
  })
}
