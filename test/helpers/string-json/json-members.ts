/** The string scan of main at 4975aea, before the parse read bytes: the property tests compare the byte scan with it. */
import { exactAsDouble } from '../../../src/util/double-literal.ts'
import { endOfJsonString, skipJsonSpace } from './json-scan.ts'

/**
 * The members of a top-level JSON object and the elements of its array members, found by one scan
 * that skips strings whole and counts brackets (nothing is parsed): what the parse memo and the
 * body splice work from. Each function says where it starts, so a scan can go on from a point a
 * previous scan of the same text prefix reached (parse-carry.ts).
 */

export interface MemberSpan {
  readonly keyStart: number
  readonly keyEnd: number
  readonly valueStart: number
  readonly valueEnd: number
  /** An array value's element spans (start, end, flat), found by the same scan that found its end. */
  readonly elements: number[] | undefined
}

/** The spans of a top-level object's members, or undefined when the text is not one (JSON.parse then says why). */
export function topLevelMembers(text: string): MemberSpan[] | undefined {
  let index = skipJsonSpace(text, 0)
  if (text.charCodeAt(index) !== 0x7b) return undefined
  index = skipJsonSpace(text, index + 1)
  if (text.charCodeAt(index) === 0x7d) return skipJsonSpace(text, index + 1) === text.length ? [] : undefined
  return membersFrom(text, index, [])
}

/** The members from the key starting at `index` on, after `members` (found before it). */
function membersFrom(text: string, index: number, members: MemberSpan[]): MemberSpan[] | undefined {
  if (text.charCodeAt(index) !== 0x22) return undefined
  const keyEnd = endOfJsonString(text, index)
  if (keyEnd < 0) return undefined
  const colon = skipJsonSpace(text, keyEnd)
  if (text.charCodeAt(colon) !== 0x3a) return undefined
  const valueStart = skipJsonSpace(text, colon + 1)
  const elements = text.charCodeAt(valueStart) === 0x5b ? arrayElements(text, valueStart) : undefined
  const valueEnd = elements === undefined ? endOfValue(text, valueStart) : elements.end
  if (valueEnd < 0) return undefined
  members.push({ keyStart: index, keyEnd, valueStart, valueEnd, elements: elements?.spans })
  return membersAfter(text, valueEnd, members)
}

/** The members after the one whose value ends at `valueEnd` (the last of `members`), to the object's close. */
export function membersAfter(text: string, valueEnd: number, members: MemberSpan[]): MemberSpan[] | undefined {
  const index = skipJsonSpace(text, valueEnd)
  const next = text.charCodeAt(index)
  if (next === 0x7d) return skipJsonSpace(text, index + 1) === text.length ? members : undefined
  if (next !== 0x2c) return undefined
  return membersFrom(text, skipJsonSpace(text, index + 1), members)
}

/**
 * Start and end offsets of each element of the array opening at `start` (flat), and one past its
 * close; `end` is -1 when it is not well formed (or holds a literal a double would change).
 */
function arrayElements(text: string, start: number): { readonly spans: number[]; readonly end: number } {
  const index = skipJsonSpace(text, start + 1)
  if (text.charCodeAt(index) === 0x5d) return { spans: [], end: index + 1 }
  return elementsFrom(text, index, [])
}

/** The elements from the one starting at `index` to the array's close, after `spans` (found before it). */
function elementsFrom(text: string, from: number, spans: number[]): { readonly spans: number[]; readonly end: number } {
  let index = from
  for (;;) {
    const elementEnd = endOfValue(text, index)
    if (elementEnd < 0) return { spans, end: -1 }
    spans.push(index, elementEnd)
    const after = elementsAfter(text, elementEnd)
    if (after.close) return { spans, end: after.at }
    if (after.at < 0) return { spans, end: -1 }
    index = after.at
  }
}

/** Past the element ending at `elementEnd`: the next element's start, or one past the array's close; -1 when neither follows. */
function elementsAfter(text: string, elementEnd: number): { readonly at: number; readonly close: boolean } {
  const index = skipJsonSpace(text, elementEnd)
  const next = text.charCodeAt(index)
  if (next === 0x5d) return { at: index + 1, close: true }
  if (next !== 0x2c) return { at: -1, close: false }
  return { at: skipJsonSpace(text, index + 1), close: false }
}

/** The rest of an array whose first elements (`spans`, the last ending at `elementEnd`) are known, like arrayElements. */
export function arrayElementsAfter(
  text: string,
  elementEnd: number,
  spans: number[],
): { readonly spans: number[]; readonly end: number } {
  const after = elementsAfter(text, elementEnd)
  if (after.close) return { spans, end: after.at }
  return after.at < 0 ? { spans, end: -1 } : elementsFrom(text, after.at, spans)
}

/**
 * One past the value starting at `start`: strings skipped whole, brackets counted; -1 when it does
 * not end, or holds a number literal a double cannot hold. JSON.parse of the span still checks it.
 */
function endOfValue(text: string, start: number): number {
  const first = text.charCodeAt(start)
  if (first === 0x22) return endOfJsonString(text, start)
  if (first !== 0x7b && first !== 0x5b) return endOfScalar(text, start)
  let depth = 0
  for (let index = start; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code === 0x22) {
      const after = endOfJsonString(text, index)
      if (after < 0) return -1
      index = after - 1
    } else if (code === 0x7b || code === 0x5b) depth++
    else if (code === 0x7d || code === 0x5d) {
      depth--
      if (depth === 0) return index + 1
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      const after = endOfScalar(text, index)
      if (after < 0) return -1
      index = after - 1
    }
  }
  return -1
}

/** One past a number or literal word; -1 for a number a double would change. */
function endOfScalar(text: string, start: number): number {
  let index = start
  for (;;) {
    const code = text.charCodeAt(index)
    if (Number.isNaN(code) || code === 0x2c || code === 0x7d || code === 0x5d || code <= 0x20) break
    index++
  }
  if (index === start) return -1
  const first = text.charCodeAt(start)
  const numeric = first === 0x2d || (first >= 0x30 && first <= 0x39)
  // Short literals without an exponent are always exact; the rest are checked.
  if (
    numeric &&
    (index - start > 15 || /[eE]/.test(text.slice(start, index))) &&
    !exactAsDouble(text.slice(start, index))
  )
    return -1
  return index
}
