import type { MemberSpan } from './json-members.ts'
import { endOfJsonStringInBytes, skipJsonSpaceInBytes as skipJsonSpace } from './json-scan.ts'
/**
 * Writes an edited JSON document as the client's own bytes with only the changed parts replaced, so
 * every byte ctxgate did not change (number literals like `1.0` or `1E5`, escapes, whitespace,
 * duplicate keys) reaches the upstream as the client wrote it. A re-serialization would rewrite all of them.
 *
 * `next` must be built from `original` (the parse of the bytes) by copying along the edited paths:
 * subtrees it shares with `original` by reference are kept as bytes. An object whose fields all keep
 * their values gets the new fields inserted after its last field; an array of the same length is
 * compared element by element; anything else changed is written out with `serialize`. The diff
 * reads the UTF-8 bytes themselves (json-scan.ts): the body is never decoded or encoded as a whole.
 */
export function spliceJson(
  text: string,
  original: unknown,
  next: unknown,
  serialize: (value: unknown) => string,
): string {
  return spliceJsonBytes(Buffer.from(text), original, next, serialize).toString()
}

/**
 * The client's buffer copied around the patches. `members` (the parse's spans of the top-level
 * members and their arrays' elements, in bytes) let the diff skip an unchanged member without
 * scanning it, and go through a long array (the messages) by which elements changed, reading the
 * bytes of those alone.
 */
export function spliceJsonBytes(
  bytes: Buffer,
  original: unknown,
  next: unknown,
  serialize: (value: unknown) => string,
  members?: readonly MemberSpan[],
): Buffer {
  const patches = changedParts(bytes, original, next, serialize, members)
  if (patches.length === 0) return bytes
  const parts: Buffer[] = []
  let copiedTo = 0
  for (const patch of patches) {
    parts.push(bytes.subarray(copiedTo, patch.start), Buffer.from(patch.text))
    copiedTo = patch.end
  }
  parts.push(bytes.subarray(copiedTo))
  return Buffer.concat(parts)
}

function changedParts(
  bytes: Buffer,
  original: unknown,
  next: unknown,
  serialize: (value: unknown) => string,
  members: readonly MemberSpan[] = [],
): Patch[] {
  const patches: Patch[] = []
  const byStart = new Map(members.map((member) => [member.valueStart, member]))
  const known: Known = {
    end: (at) => byStart.get(at)?.valueEnd ?? endOfValue(bytes, at),
    elements: (at) => byStart.get(at)?.elements,
  }
  diffValue(bytes, skipJsonSpace(bytes, 0), original, next, patches, serialize, known)
  return patches.toSorted((a, b) => a.start - b.start)
}

/** What the parse already found: where a value ends, and an array's element spans (start, end, flat), by where it starts. */
interface Known {
  readonly end: (start: number) => number
  readonly elements: (start: number) => readonly number[] | undefined
}

interface Patch {
  readonly start: number
  readonly end: number
  readonly text: string
}

/** Diffs the value at `start` into `patches`; returns the offset just past it (one pass over the bytes). */
function diffValue(
  bytes: Buffer,
  start: number,
  original: unknown,
  next: unknown,
  patches: Patch[],
  serialize: (value: unknown) => string,
  known: Known,
): number {
  if (original === next) return known.end(start)
  const code = bytes[start]
  const mark = patches.length
  if (code === 0x7b && isPlainObject(original) && isPlainObject(next)) {
    const closed = diffObject(bytes, start, original, next, patches, serialize, known)
    if (closed !== -1) return closed
  } else if (code === 0x5b && Array.isArray(original) && Array.isArray(next) && original.length === next.length) {
    const closed = diffArray(bytes, start, original, next, patches, serialize, known)
    if (closed !== -1) return closed
  }
  patches.length = mark
  const valueEnd = known.end(start)
  patches.push({ start, end: valueEnd, text: serialize(next) })
  return valueEnd
}

function diffArray(
  bytes: Buffer,
  open: number,
  original: readonly unknown[],
  next: readonly unknown[],
  patches: Patch[],
  serialize: (value: unknown) => string,
  known: Known,
): number {
  const spans = known.elements(open)
  if (spans !== undefined && spans.length === original.length * 2)
    return diffElements(bytes, open, spans, original, next, patches, serialize, known)
  let index = skipJsonSpace(bytes, open + 1)
  if (bytes[index] === 0x5d) return original.length === 0 ? index + 1 : -1
  for (let element = 0; ; element++) {
    if (element >= original.length) return -1
    index = skipJsonSpace(bytes, diffValue(bytes, index, original[element], next[element], patches, serialize, known))
    if (bytes[index] !== 0x2c) return element === original.length - 1 ? index + 1 : -1
    index = skipJsonSpace(bytes, index + 1)
  }
}

/** An array whose element spans the parse found: only the elements that changed are read. */
function diffElements(
  bytes: Buffer,
  open: number,
  spans: readonly number[],
  original: readonly unknown[],
  next: readonly unknown[],
  patches: Patch[],
  serialize: (value: unknown) => string,
  known: Known,
): number {
  for (let element = 0; element < original.length; element++)
    if (original[element] !== next[element])
      diffValue(bytes, spans[element * 2] as number, original[element], next[element], patches, serialize, known)
  return known.end(open)
}

/** -1 when a field was taken out or cannot be found (the caller then writes the whole object). */
function diffObject(
  bytes: Buffer,
  open: number,
  original: Record<string, unknown>,
  next: Record<string, unknown>,
  patches: Patch[],
  serialize: (value: unknown) => string,
  known: Known,
): number {
  for (const key of Object.keys(original)) if (!Object.hasOwn(next, key)) return -1
  const changed = new Set(Object.keys(original).filter((key) => original[key] !== next[key]))
  // JSON.parse keeps the last of duplicate keys, so only the last one's edits are kept.
  const edits = new Map<string, Patch[]>()
  let lastEnd = open + 1
  let index = skipJsonSpace(bytes, open + 1)
  if (bytes[index] !== 0x7d) {
    for (;;) {
      const keyEnd = stringEnd(bytes, index)
      const raw = bytes.toString('utf8', index, keyEnd)
      const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
      const valueStart = skipJsonSpace(bytes, skipJsonSpace(bytes, keyEnd) + 1)
      if (changed.has(key)) {
        const own: Patch[] = []
        lastEnd = diffValue(bytes, valueStart, original[key], next[key], own, serialize, known)
        edits.set(key, own)
      } else lastEnd = known.end(valueStart)
      index = skipJsonSpace(bytes, lastEnd)
      if (bytes[index] !== 0x2c) break
      index = skipJsonSpace(bytes, index + 1)
    }
  }
  if (edits.size !== changed.size) return -1
  for (const own of edits.values()) patches.push(...own)
  const close = skipJsonSpace(bytes, lastEnd)
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

/** The offset just past the value starting at `start` (the bytes are known to be valid JSON). */
function endOfValue(bytes: Buffer, start: number): number {
  const code = bytes[start]
  if (code === 0x22) return stringEnd(bytes, start)
  if (code !== 0x7b && code !== 0x5b) {
    let index = start + 1
    for (; index < bytes.length; index++) {
      const next = bytes[index]
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
  for (let index = start; index < bytes.length; index++) {
    const next = bytes[index]
    if (next === 0x22) index = stringEnd(bytes, index) - 1
    else if (next === 0x7b || next === 0x5b) depth++
    else if ((next === 0x7d || next === 0x5d) && --depth === 0) return index + 1
  }
  return bytes.length
}

/** The bytes are known to be JSON: a string that never closes (it cannot) runs to the end. */
function stringEnd(bytes: Buffer, start: number): number {
  const end = endOfJsonStringInBytes(bytes, start)
  return end < 0 ? bytes.length : end
}
