import { isJsonObject, type Json } from '../../util/json.ts'

/** A message's content blocks (a string content is one text block); read-only, often the message's own array. */
export function blocksOf(message: Json): readonly Json[] {
  const content = message['content']
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  // Nearly always every element is a block: no copy (called for every message on every request).
  return (content as unknown[]).every(isJsonObject) ? (content as Json[]) : (content as unknown[]).filter(isJsonObject)
}

/** Thinking blocks and empty text take no cache_control; compaction blocks stay byte for byte as the server wrote them. */
export function markable(block: Json): boolean {
  if (block['type'] === 'thinking' || block['type'] === 'redacted_thinking' || block['type'] === 'compaction')
    return false
  if (block['type'] === 'text') return typeof block['text'] === 'string' && block['text'].trim() !== ''
  return true
}
