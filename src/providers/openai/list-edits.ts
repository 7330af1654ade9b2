import type { Edit } from '../../rewrite/types.ts'
import type { Json } from '../../util/json.ts'

/** The API's limit on prompt_cache_key length. */
export const cacheKeyMax = 64

/** Leading system/developer entries are the head of an OpenAI list: never edited, never dropped. */
export function leadingSystemCount(items: readonly Json[]): number {
  let count = 0
  while (count < items.length && (items[count]?.['role'] === 'system' || items[count]?.['role'] === 'developer'))
    count++
  return count
}

/**
 * The edits on the list after its head: results replaced in place (`replaceResult` knows the
 * format's field), then a drop that keeps the first entry with the note appended.
 */
export function editList(
  rest: readonly Json[],
  edits: readonly Edit[],
  replaceResult: (item: Json, replacements: ReadonlyMap<string, string>) => Json,
  notePartType: 'text' | 'input_text',
): Json[] {
  const replacements = new Map<string, string>()
  for (const edit of edits) if (edit.kind === 'replace-tool-result') replacements.set(edit.id, edit.text)
  let out = replacements.size === 0 ? [...rest] : rest.map((item) => replaceResult(item, replacements))
  const drop = edits.find((edit): edit is Extract<Edit, { kind: 'drop-messages' }> => edit.kind === 'drop-messages')
  if (drop && out[0]) out = [withNote(out[0], drop.note, notePartType), ...out.slice(drop.to)]
  return out
}

/** The note joins the first entry; a list of parts gets one more of the format's text type (Chat `text`, Responses `input_text`). */
export function withNote(first: Json, note: string, partType: 'text' | 'input_text'): Json {
  const content = first['content']
  if (typeof content === 'string') return { ...first, content: `${content}\n\n${note}` }
  if (Array.isArray(content))
    return {
      ...first,
      content: [...content, { type: partType, text: note }],
    }
  return { ...first, content: note }
}

/** OpenAI caches by prefix and key: give a session's requests one key when the client set none. True when it did. */
export function withCacheKey(body: Json, out: Json, sessionId: string): boolean {
  if (body['prompt_cache_key'] !== undefined) return false
  out['prompt_cache_key'] = sessionId.slice(0, cacheKeyMax)
  return true
}
