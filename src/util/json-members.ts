import { exactAsDouble } from './double-literal.ts'
import { endOfJsonStringInBytes as endOfJsonString, skipJsonSpaceInBytes as skipJsonSpace } from './json-scan.ts'

/**
 * The members of a top-level JSON object and the elements of its array members, found by one scan
 * of its UTF-8 bytes that skips strings whole and counts brackets (nothing is decoded or parsed):
 * what the parse memo and the body splice work from, in byte offsets. Each function says where it
 * starts, so a scan can go on from a point a previous scan of the same bytes reached (parse-carry.ts).
 */

export interface MemberSpan {
  readonly keyStart: number
  readonly keyEnd: number
  readonly valueStart: number
  readonly valueEnd: number
  /** An array value's element spans (start, end, flat), found by the same scan that found its end. */
  readonly elements: number[] | undefined
}

/** The spans of a top-level object's members, or undefined when the bytes are not one (JSON.parse then says why). */
export function topLevelMembers(bytes: Buffer): MemberSpan[] | undefined {
  let index = skipJsonSpace(bytes, 0)
  if (bytes[index] !== 0x7b) return undefined
  index = skipJsonSpace(bytes, index + 1)
  if (bytes[index] === 0x7d) return skipJsonSpace(bytes, index + 1) === bytes.length ? [] : undefined
  return membersFrom(bytes, index, [])
}

/** The members from the key starting at `index` on, after `members` (found before it). */
function membersFrom(bytes: Buffer, index: number, members: MemberSpan[]): MemberSpan[] | undefined {
  if (bytes[index] !== 0x22) return undefined
  const keyEnd = endOfJsonString(bytes, index)
  if (keyEnd < 0) return undefined
  const colon = skipJsonSpace(bytes, keyEnd)
  if (bytes[colon] !== 0x3a) return undefined
  const valueStart = skipJsonSpace(bytes, colon + 1)
  const elements = bytes[valueStart] === 0x5b ? arrayElements(bytes, valueStart) : undefined
  const valueEnd = elements === undefined ? endOfValue(bytes, valueStart) : elements.end
  if (valueEnd < 0) return undefined
  members.push({ keyStart: index, keyEnd, valueStart, valueEnd, elements: elements?.spans })
  return membersAfter(bytes, valueEnd, members)
}

/** The members after the one whose value ends at `valueEnd` (the last of `members`), to the object's close. */
export function membersAfter(bytes: Buffer, valueEnd: number, members: MemberSpan[]): MemberSpan[] | undefined {
  const index = skipJsonSpace(bytes, valueEnd)
  const next = bytes[index]
  if (next === 0x7d) return skipJsonSpace(bytes, index + 1) === bytes.length ? members : undefined
  if (next !== 0x2c) return undefined
  return membersFrom(bytes, skipJsonSpace(bytes, index + 1), members)
}

/**
 * Start and end offsets of each element of the array opening at `start` (flat), and one past its
 * close; `end` is -1 when it is not well formed (or holds a literal a double would change).
 */
function arrayElements(bytes: Buffer, start: number): { readonly spans: number[]; readonly end: number } {
  const index = skipJsonSpace(bytes, start + 1)
  if (bytes[index] === 0x5d) return { spans: [], end: index + 1 }
  return elementsFrom(bytes, index, [])
}

/** The elements from the one starting at `index` to the array's close, after `spans` (found before it). */
function elementsFrom(
  bytes: Buffer,
  from: number,
  spans: number[],
): { readonly spans: number[]; readonly end: number } {
  let index = from
  for (;;) {
    const elementEnd = endOfValue(bytes, index)
    if (elementEnd < 0) return { spans, end: -1 }
    spans.push(index, elementEnd)
    const after = elementsAfter(bytes, elementEnd)
    if (after.close) return { spans, end: after.at }
    if (after.at < 0) return { spans, end: -1 }
    index = after.at
  }
}

/** Past the element ending at `elementEnd`: the next element's start, or one past the array's close; -1 when neither follows. */
function elementsAfter(bytes: Buffer, elementEnd: number): { readonly at: number; readonly close: boolean } {
  const index = skipJsonSpace(bytes, elementEnd)
  const next = bytes[index]
  if (next === 0x5d) return { at: index + 1, close: true }
  if (next !== 0x2c) return { at: -1, close: false }
  return { at: skipJsonSpace(bytes, index + 1), close: false }
}

/** The rest of an array whose first elements (`spans`, the last ending at `elementEnd`) are known, like arrayElements. */
export function arrayElementsAfter(
  bytes: Buffer,
  elementEnd: number,
  spans: number[],
): { readonly spans: number[]; readonly end: number } {
  const after = elementsAfter(bytes, elementEnd)
  if (after.close) return { spans, end: after.at }
  return after.at < 0 ? { spans, end: -1 } : elementsFrom(bytes, after.at, spans)
}

/**
 * One past the value starting at `start`: strings skipped whole, brackets counted; -1 when it does
 * not end, or holds a number literal a double cannot hold. JSON.parse of the span still checks it.
 */
function endOfValue(bytes: Buffer, start: number): number {
  const first = bytes[start]
  if (first === 0x22) return endOfJsonString(bytes, start)
  if (first !== 0x7b && first !== 0x5b) return endOfScalar(bytes, start)
  let depth = 0
  for (let index = start; index < bytes.length; index++) {
    const code = bytes[index] as number
    if (code === 0x22) {
      const after = endOfJsonString(bytes, index)
      if (after < 0) return -1
      index = after - 1
    } else if (code === 0x7b || code === 0x5b) depth++
    else if (code === 0x7d || code === 0x5d) {
      depth--
      if (depth === 0) return index + 1
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      const after = endOfScalar(bytes, index)
      if (after < 0) return -1
      index = after - 1
    }
  }
  return -1
}

/** One past a number or literal word; -1 for a number a double would change. */
function endOfScalar(bytes: Buffer, start: number): number {
  let index = start
  for (;;) {
    const code = bytes[index]
    if (code === undefined || code === 0x2c || code === 0x7d || code === 0x5d || code <= 0x20) break
    index++
  }
  if (index === start) return -1
  const first = bytes[start] as number
  const numeric = first === 0x2d || (first >= 0x30 && first <= 0x39)
  // Short literals without an exponent are always exact; the rest are checked.
  if (
    numeric &&
    (index - start > 15 || /[eE]/.test(bytes.toString('latin1', start, index))) &&
    !exactAsDouble(bytes.toString('latin1', start, index))
  )
    return -1
  return index
}
