import { isJsonObject, type Json } from '../../util/json.ts'
import type { Edit } from '../../rewrite/types.ts'
import { inputClears } from '../input-clears.ts'

/**
 * Old `tool_use` inputs ctxgate cleared (cleared-input.ts), written into the assistant messages: the
 * block keeps its id, name, cache marker and every other field; only `input` changes. New objects
 * for what changes, the client's own for the rest (the adapter copies on write). `messages` is the
 * adapter's own list, handed back as it is when nothing is cleared (most requests: no second copy).
 */
export function withClearedInputs(messages: Json[], edits: readonly Edit[]): Json[] {
  const clears = inputClears(edits)
  if (clears.size === 0) return messages
  return messages.map((message) => {
    if (message['role'] !== 'assistant' || !Array.isArray(message['content'])) return message
    let changed = false
    const content = (message['content'] as unknown[]).map((block) => {
      if (!isJsonObject(block) || block['type'] !== 'tool_use') return block
      const input = clears.get(String(block['id']))
      if (input === undefined) return block
      changed = true
      return { ...block, input }
    })
    return changed ? { ...message, content } : message
  })
}
