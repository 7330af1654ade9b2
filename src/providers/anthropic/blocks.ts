import { isJsonObject, type Json } from '../../util/json.ts'

/** A message's content blocks (a string content is one text block). */
export function blocksOf(message: Json): Json[] {
  const content = message['content']
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return Array.isArray(content) ? (content as unknown[]).filter(isJsonObject) : []
}

/** Thinking blocks and empty text take no cache_control; compaction blocks stay byte for byte as the server wrote them. */
export function markable(block: Json): boolean {
  if (block['type'] === 'thinking' || block['type'] === 'redacted_thinking' || block['type'] === 'compaction')
    return false
  if (block['type'] === 'text') return typeof block['text'] === 'string' && block['text'].trim() !== ''
  return true
}
