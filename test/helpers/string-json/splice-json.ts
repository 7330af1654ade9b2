/** The splice through a decoded string, as it was before it read bytes (main at 4975aea): the property tests compare the new one with it. */
import { endOfJsonString, skipJsonSpace } from './json-scan.ts'
/**
 * Writes an edited JSON document as the client's own text with only the changed parts replaced, so
 * every byte ctxgate did not change (number literals like `1.0` or `1E5`, escapes, whitespace,
 * duplicate keys) reaches the upstream as the client wrote it. A re-serialization would rewrite all of them.
 *
 * `next` must be built from `original` (the parse of `text`) by copying along the edited paths:
 * subtrees it shares with `original` by reference are kept as text. An object whose fields all keep
 * their values gets the new fields inserted after its opening brace; an array of the same length is
 * compared element by element; anything else changed is written out with `serialize`.
 */
export function spliceJson(
  text: string,
  original: unknown,
  next: unknown,
  serialize: (value: unknown) => string,
): string {
  const patches = changedParts(text, original, next, serialize)
  let out = ''
  let copiedTo = 0
  for (const patch of patches) {
    out += text.slice(copiedTo, patch.start) + patch.text
    copiedTo = patch.end
  }
  return out + text.slice(copiedTo)
}

/**
 * The same as bytes: the client's buffer (`bytes`, which decodes to `text`) copied around the
 * patches, never encoded again as a whole (a 300 KB string costs milliseconds to encode).
 */
export function spliceJsonBytes(
  bytes: Buffer,
  text: string,
  original: unknown,
  next: unknown,
  serialize: (value: unknown) => string,
  knownEnds?: ReadonlyMap<number, number>,
): Buffer {
  const patches = changedParts(text, original, next, serialize, knownEnds)
  if (patches.length === 0) return bytes
  // One byte per character when the text is ASCII; else each offset is counted in UTF-8 bytes.
  const ascii = bytes.length === text.length
  const parts: Buffer[] = []
  let copiedTo = 0
  let copiedToByte = 0
  for (const patch of patches) {
    const startByte = ascii ? patch.start : copiedToByte + Buffer.byteLength(text.slice(copiedTo, patch.start))
    const endByte = ascii ? patch.end : startByte + Buffer.byteLength(text.slice(patch.start, patch.end))
    parts.push(bytes.subarray(copiedToByte, startByte), Buffer.from(patch.text))
    copiedTo = patch.end
    copiedToByte = endByte
  }
  parts.push(bytes.subarray(copiedToByte))
  return Buffer.concat(parts)
}

function changedParts(
  text: string,
  original: unknown,
  next: unknown,
  serialize: (value: unknown) => string,
  knownEnds?: ReadonlyMap<number, number>,
): Patch[] {
  const patches: Patch[] = []
  // An unchanged part whose end the parse already found is skipped without scanning it again.
  const end = knownEnds
    ? (at: number) => knownEnds.get(at) ?? endOfValue(text, at)
    : (at: number) => endOfValue(text, at)
  diffValue(text, skipJsonSpace(text, 0), original, next, patches, serialize, end)
  return patches.toSorted((a, b) => a.start - b.start)
}

/** One past the value starting at an index of the text. */
type ValueEnd = (start: number) => number

interface Patch {
  readonly start: number
  readonly end: number
  readonly text: string
}

/** Diffs the value at `start` into `patches`; returns the index just past it (one pass over the text). */
function diffValue(
  text: string,
  start: number,
  original: unknown,
  next: unknown,
  patches: Patch[],
  serialize: (value: unknown) => string,
  end: ValueEnd,
): number {
  if (original === next) return end(start)
  const code = text.charCodeAt(start)
  const mark = patches.length
  if (code === 0x7b && isPlainObject(original) && isPlainObject(next)) {
    const closed = diffObject(text, start, original, next, patches, serialize, end)
    if (closed !== -1) return closed
  } else if (code === 0x5b && Array.isArray(original) && Array.isArray(next) && original.length === next.length) {
    const closed = diffArray(text, start, original, next, patches, serialize, end)
    if (closed !== -1) return closed
  }
  patches.length = mark
  const valueEnd = end(start)
  patches.push({ start, end: valueEnd, text: serialize(next) })
  return valueEnd
}

function diffArray(
  text: string,
  open: number,
  original: readonly unknown[],
  next: readonly unknown[],
  patches: Patch[],
  serialize: (value: unknown) => string,
  end: ValueEnd,
): number {
  let index = skipJsonSpace(text, open + 1)
  if (text.charCodeAt(index) === 0x5d) return original.length === 0 ? index + 1 : -1
  for (let element = 0; ; element++) {
    if (element >= original.length) return -1
    index = skipJsonSpace(text, diffValue(text, index, original[element], next[element], patches, serialize, end))
    if (text.charCodeAt(index) !== 0x2c) return element === original.length - 1 ? index + 1 : -1
    index = skipJsonSpace(text, index + 1)
  }
}

/** -1 when a field was taken out or cannot be found (the caller then writes the whole object). */
function diffObject(
  text: string,
  open: number,
  original: Record<string, unknown>,
  next: Record<string, unknown>,
  patches: Patch[],
  serialize: (value: unknown) => string,
  end: ValueEnd,
): number {
  for (const key of Object.keys(original)) if (!Object.hasOwn(next, key)) return -1
  const changed = new Set(Object.keys(original).filter((key) => original[key] !== next[key]))
  // JSON.parse keeps the last of duplicate keys, so only the last one's edits are kept.
  const edits = new Map<string, Patch[]>()
  let lastEnd = open + 1
  let index = skipJsonSpace(text, open + 1)
  if (text.charCodeAt(index) !== 0x7d) {
    for (;;) {
      const keyEnd = stringEnd(text, index)
      const raw = text.slice(index, keyEnd)
      const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
      const valueStart = skipJsonSpace(text, skipJsonSpace(text, keyEnd) + 1)
      if (changed.has(key)) {
        const own: Patch[] = []
        lastEnd = diffValue(text, valueStart, original[key], next[key], own, serialize, end)
        edits.set(key, own)
      } else lastEnd = end(valueStart)
      index = skipJsonSpace(text, lastEnd)
      if (text.charCodeAt(index) !== 0x2c) break
      index = skipJsonSpace(text, index + 1)
    }
  }
  if (edits.size !== changed.size) return -1
  for (const own of edits.values()) patches.push(...own)
  const close = skipJsonSpace(text, lastEnd)
  const added = Object.keys(next).filter((key) => !Object.hasOwn(original, key) && next[key] !== undefined)
  if (added.length > 0) {
    // After the last field, where a spread (`{ ...block, cache_control }`) puts them, so a parse of the text keeps the order.
    const written = added.map((key) => `${JSON.stringify(key)}:${serialize(next[key])}`).join(',')
    patches.push({ start: lastEnd, end: lastEnd, text: lastEnd === open + 1 ? written : `,${written}` })
  }
  return close + 1
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The index just past the value starting at `start` (the text is known to be valid JSON). */
function endOfValue(text: string, start: number): number {
  const code = text.charCodeAt(start)
  if (code === 0x22) return stringEnd(text, start)
  if (code !== 0x7b && code !== 0x5b) {
    let index = start + 1
    for (; index < text.length; index++) {
      const next = text.charCodeAt(index)
      if (
        next === 0x2c ||
        next === 0x5d ||
        next === 0x7d ||
        next === 0x20 ||
        next === 0x0a ||
        next === 0x0d ||
        next === 0x09
      )
        break
    }
    return index
  }
  let depth = 0
  for (let index = start; index < text.length; index++) {
    const next = text.charCodeAt(index)
    if (next === 0x22) index = stringEnd(text, index) - 1
    else if (next === 0x7b || next === 0x5b) depth++
    else if ((next === 0x7d || next === 0x5d) && --depth === 0) return index + 1
  }
  return text.length
}

/** The text is known to be JSON: a string that never closes (it cannot) runs to the end. */
function stringEnd(text: string, start: number): number {
  const end = endOfJsonString(text, start)
  return end < 0 ? text.length : end
}
