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
): Buffer {
  const patches = changedParts(text, original, next, serialize)
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

function changedParts(text: string, original: unknown, next: unknown, serialize: (value: unknown) => string): Patch[] {
  const patches: Patch[] = []
  diffValue(text, skipWhitespace(text, 0), original, next, patches, serialize)
  return patches.sort((a, b) => a.start - b.start)
}

interface Patch {
  readonly start: number
  readonly end: number
  readonly text: string
}

interface Member {
  readonly key: string
  readonly start: number
  readonly end: number
}

function diffValue(
  text: string,
  start: number,
  original: unknown,
  next: unknown,
  patches: Patch[],
  serialize: (value: unknown) => string,
): void {
  if (original === next) return
  const code = text.charCodeAt(start)
  if (code === 0x7b && isPlainObject(original) && isPlainObject(next)) {
    if (diffObject(text, start, original, next, patches, serialize)) return
  } else if (code === 0x5b && Array.isArray(original) && Array.isArray(next) && original.length === next.length) {
    const elements = arrayElements(text, start)
    if (elements.length === original.length) {
      elements.forEach((element, index) =>
        diffValue(text, element.start, original[index], next[index], patches, serialize),
      )
      return
    }
  }
  patches.push({ start, end: endOfValue(text, start), text: serialize(next) })
}

/** False when a field was taken out (the caller then writes the whole object). */
function diffObject(
  text: string,
  start: number,
  original: Record<string, unknown>,
  next: Record<string, unknown>,
  patches: Patch[],
  serialize: (value: unknown) => string,
): boolean {
  for (const key of Object.keys(original)) if (!Object.hasOwn(next, key)) return false
  const changed = Object.keys(original).filter((key) => original[key] !== next[key])
  if (changed.length > 0) {
    // JSON.parse keeps the last of duplicate keys, so the last one is the one edited.
    const members = new Map(objectMembers(text, start).map((member) => [member.key, member]))
    for (const key of changed) {
      const member = members.get(key)
      if (!member) return false
      diffValue(text, member.start, original[key], next[key], patches, serialize)
    }
  }
  const added = Object.keys(next).filter((key) => !Object.hasOwn(original, key) && next[key] !== undefined)
  if (added.length === 0) return true
  // After the last field, where a spread (`{ ...block, cache_control }`) puts them, so a parse of the text keeps the order.
  const written = added.map((key) => `${JSON.stringify(key)}:${serialize(next[key])}`).join(',')
  let last = endOfValue(text, start) - 2
  while (isWhitespace(text.charCodeAt(last))) last--
  const empty = last === start
  patches.push({ start: last + 1, end: last + 1, text: empty ? written : `,${written}` })
  return true
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function objectMembers(text: string, open: number): Member[] {
  const members: Member[] = []
  let index = skipWhitespace(text, open + 1)
  if (text.charCodeAt(index) === 0x7d) return members
  for (;;) {
    const keyEnd = endOfString(text, index)
    const raw = text.slice(index, keyEnd)
    const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
    const valueStart = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1)
    const valueEnd = endOfValue(text, valueStart)
    members.push({ key, start: valueStart, end: valueEnd })
    index = skipWhitespace(text, valueEnd)
    if (text.charCodeAt(index) !== 0x2c) return members
    index = skipWhitespace(text, index + 1)
  }
}

function arrayElements(text: string, open: number): { start: number; end: number }[] {
  const elements: { start: number; end: number }[] = []
  let index = skipWhitespace(text, open + 1)
  if (text.charCodeAt(index) === 0x5d) return elements
  for (;;) {
    const end = endOfValue(text, index)
    elements.push({ start: index, end })
    index = skipWhitespace(text, end)
    if (text.charCodeAt(index) !== 0x2c) return elements
    index = skipWhitespace(text, index + 1)
  }
}

/** JSON whitespace is space, tab, LF and CR. */
function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}

function skipWhitespace(text: string, from: number): number {
  let index = from
  while (isWhitespace(text.charCodeAt(index))) index++
  return index
}

/** The index just past the value starting at `start` (the text is known to be valid JSON). */
function endOfValue(text: string, start: number): number {
  const code = text.charCodeAt(start)
  if (code === 0x22) return endOfString(text, start)
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
    if (next === 0x22) index = endOfString(text, index) - 1
    else if (next === 0x7b || next === 0x5b) depth++
    else if ((next === 0x7d || next === 0x5d) && --depth === 0) return index + 1
  }
  return text.length
}

function endOfString(text: string, start: number): number {
  for (let quote = text.indexOf('"', start + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return quote + 1
  }
  return text.length
}
