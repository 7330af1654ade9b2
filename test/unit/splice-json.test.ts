import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseReusingElements } from '../../src/util/reuse-parsed-elements.ts'
import { spliceJson, spliceJsonBytes } from '../../src/util/splice-json.ts'
import { spliceJsonBytes as spliceThroughText } from '../helpers/string-json/splice-json.ts'

const serialize = (value: unknown): string => JSON.stringify(value)

/** A copy of `value` with one random part changed, sharing every other part by reference (as the adapters build it). */
function editedCopy(value: unknown, path: readonly number[], replacement: unknown, addField: boolean): unknown {
  if (path.length === 0 || typeof value !== 'object' || value === null) {
    if (addField && typeof value === 'object' && value !== null && !Array.isArray(value))
      return { ...value, added_field: replacement }
    return replacement
  }
  const [step = 0, ...rest] = path
  if (Array.isArray(value)) {
    if (value.length === 0) return replacement
    const index = step % value.length
    return value.map((element, at) => (at === index ? editedCopy(element, rest, replacement, addField) : element))
  }
  const keys = Object.keys(value)
  if (keys.length === 0) return addField ? { added_field: replacement } : replacement
  const key = keys[step % keys.length] as string
  return {
    ...(value as Record<string, unknown>),
    [key]: editedCopy((value as Record<string, unknown>)[key], rest, replacement, addField),
  }
}

/** JSON text with random whitespace between tokens, as a client might write it. */
const spaced = (text: string, seed: number): string =>
  text.replace(/([,:[\]{}])(?=(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*$)/g, (token, _match, offset: number) =>
    (offset + seed) % 3 === 0 ? `${token} \n\t` : token,
  )

describe('spliceJson', () => {
  it('does not re-serialize what did not change: 1.0, 1E5, escapes and a duplicate key stay as written', () => {
    const text =
      '{"a":1.0,"b":[1E5, "caf\\u00e9"],"dup":1,"dup":2,"blocks":[{"type":"text","text":"x"},{"type":"text" , "text":"y"}]}'
    const original = JSON.parse(text) as { blocks: object[] }
    const blocks = original.blocks.map((block, index) =>
      index === 1 ? { ...block, cache_control: { type: 'ephemeral' } } : block,
    )
    const next = { ...original, blocks }
    expect(spliceJson(text, original, next, serialize)).toBe(
      '{"a":1.0,"b":[1E5, "caf\\u00e9"],"dup":1,"dup":2,"blocks":[{"type":"text","text":"x"},{"type":"text" , "text":"y","cache_control":{"type":"ephemeral"}}]}',
    )
  })

  it('counts offsets in UTF-8 bytes when the text is not ASCII', () => {
    const text = '{"a":"café — ☕ 😀","b":[{"t":"naïve"},{"t":"x"}],"c":"end ü"}'
    const original = JSON.parse(text) as { b: object[] }
    const next = { ...original, b: [original.b[0], { ...original.b[1], cache_control: { type: 'ephemeral' } }], c: 'ß' }
    expect(spliceJsonBytes(Buffer.from(text), original, next, serialize).toString()).toBe(
      '{"a":"café — ☕ 😀","b":[{"t":"naïve"},{"t":"x","cache_control":{"type":"ephemeral"}}],"c":"ß"}',
    )
  })

  it('replaces only a changed value, and edits the last of duplicate keys (the one a parse keeps)', () => {
    const text = '{ "k": "old", "k": "kept-by-parse", "n": 1.50 }'
    const original = JSON.parse(text) as Record<string, unknown>
    expect(spliceJson(text, original, { ...original, k: 'new' }, serialize)).toBe(
      '{ "k": "old", "k": "new", "n": 1.50 }',
    )
    expect(spliceJson('{ }', {}, { a: 1 }, serialize)).toBe('{"a":1 }')
  })

  it('always writes text that parses to the edited value, whatever the edit and the formatting (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.json({ maxDepth: 4 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.jsonValue({ maxDepth: 2 }),
        fc.boolean(),
        fc.nat(),
        (json, path, replacement, addField, seed) => {
          const text = spaced(json, seed)
          const original = JSON.parse(text) as unknown
          const next = editedCopy(original, path, replacement, addField)
          const spliced = spliceJson(text, original, next, serialize)
          expect(spliceJsonBytes(Buffer.from(text), original, next, serialize).toString()).toBe(spliced)
          expect(JSON.parse(spliced)).toEqual(JSON.parse(JSON.stringify(next)))
          if (next === original) expect(spliced).toBe(text)
        },
      ),
      { numRuns: 400 },
    )
  })

  it('writes the same bytes reading the body as bytes as the splice through its decoded text did, any text (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.json({ maxDepth: 4, stringUnit: 'grapheme' }),
          // A body's shape: top-level members, some of them arrays of objects (the messages).
          fc
            .dictionary(
              fc.string({ unit: 'grapheme', maxLength: 5 }),
              fc.oneof(
                fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }),
                fc.array(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })), { maxLength: 8 }),
              ),
            )
            .map((body) => JSON.stringify(body)),
        ),
        fc.array(fc.array(fc.nat(), { maxLength: 5 }), { minLength: 1, maxLength: 3 }),
        fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }),
        fc.boolean(),
        fc.boolean(),
        fc.nat(),
        (json, paths, replacement, addField, addTopField, seed) => {
          const text = spaced(json, seed)
          const bytes = Buffer.from(text)
          const parsed = parseReusingElements(bytes)
          const original = parsed?.value ?? (JSON.parse(text) as unknown)
          const edited = paths.reduce<unknown>(
            (value, path) => editedCopy(value, path, replacement, addField),
            original,
          )
          const next =
            addTopField && typeof edited === 'object' && edited !== null && !Array.isArray(edited)
              ? { ...edited, top_added: replacement }
              : edited
          const before = spliceThroughText(bytes, text, original, next, serialize)
          expect(spliceJsonBytes(bytes, original, next, serialize)).toEqual(before)
          expect(spliceJsonBytes(bytes, original, next, serialize, parsed?.members)).toEqual(before)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('skips by the ends the parse found and writes the same bytes as when it scans for them (fast-check)', () => {
    let checked = 0
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string(),
          fc.json({ maxDepth: 3 }).map((text) => JSON.parse(text) as unknown),
        ),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.jsonValue({ maxDepth: 2 }),
        fc.boolean(),
        fc.nat(),
        (object, path, replacement, addField, seed) => {
          const text = spaced(JSON.stringify(object), seed)
          const parsed = parseReusingElements(Buffer.from(text))
          if (parsed === undefined) return
          checked++
          const next = editedCopy(parsed.value, path, replacement, addField)
          const bytes = Buffer.from(text)
          expect(spliceJsonBytes(bytes, parsed.value, next, serialize, parsed.members).toString()).toBe(
            spliceJsonBytes(bytes, parsed.value, next, serialize).toString(),
          )
        },
      ),
      { numRuns: 300 },
    )
    expect(checked).toBeGreaterThan(100)
  })
})
