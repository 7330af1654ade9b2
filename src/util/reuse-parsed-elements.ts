import { endOfJsonString, skipJsonSpace } from './json-scan.ts'
/**
 * A chat client re-sends its whole history on every request, so nearly all of a body's text is
 * text the process parsed a moment ago. A top-level object is parsed here member by member, and
 * each long member (and each element of a long array member: the messages, the input items, the
 * tools) is looked up by its exact text before JSON.parse runs: an unchanged element comes back as
 * the same frozen value, its strings the same strings, so token counts and views memoised on them
 * are found without hashing their text again. The result equals JSON.parse(text) in value and key
 * order. The same scan looks at every number literal outside strings: one a double cannot hold, or
 * anything the scanner does not expect, and the caller parses the text its own way.
 */
import { exactAsDouble } from './double-literal.ts'

/** Elements shorter than this parse faster than they are looked up. */
const reuseMinChars = 128
/** The memo keeps the texts it keys on and the values parsed from them: cap the texts' total length. */
const memoMaxChars = 16 * 1024 * 1024
/** Texts longer than this are parsed each time (one alone would take a large share of the memo). */
const memoMaxEntryChars = memoMaxChars / 8

/** `used` is set when an entry is found again: eviction passes over it once (second chance) instead of reordering the Map on every hit. */
interface MemoEntry {
  readonly text: string
  readonly value: unknown
  used: boolean
}

const memo = new Map<string, MemoEntry>()
let memoChars = 0

/** Texts longer than this are parsed without the memo. */
export const reuseMaxTextChars = memoMaxChars / 2

/** The characters the memo holds as keys now (for tests and the budget's own check). */
export function reuseMemoChars(): number {
  return memoChars
}

/**
 * Parses a top-level object like JSON.parse, reusing the values of members and elements seen
 * before; undefined when `text` is not an object this scan can follow or holds a number literal
 * a double would change. Throws JSON.parse's error for a member that is not valid JSON.
 */
export function parseReusingElements(text: string): ReusedParse | undefined {
  // A body this large would push out most of what the memo holds, and a few of them take turns
  // missing: the memo's copies and lookups then cost twice a plain parse (27 MB bodies, measured).
  if (text.length > reuseMaxTextChars) return undefined
  const members = topLevelMembers(text)
  if (members === undefined) return undefined
  const out: Record<string, unknown> = {}
  const valueEnds = new Map<number, number>()
  for (const member of members) {
    const key = JSON.parse(text.slice(member.keyStart, member.keyEnd)) as string
    // An own `__proto__` key would set the prototype when assigned: JSON.parse makes it a plain property.
    if (key === '__proto__') return undefined
    out[key] = memberValue(text, member, valueEnds)
  }
  return { value: out, valueEnds }
}

export interface ReusedParse {
  readonly value: Record<string, unknown>
  /**
   * Where each member's value and each element of an array member ends, by where it starts: a
   * writer splicing edits into the same text skips unchanged parts without scanning them again.
   */
  readonly valueEnds: ReadonlyMap<number, number>
}

export interface MemberSpan {
  readonly keyStart: number
  readonly keyEnd: number
  readonly valueStart: number
  readonly valueEnd: number
  /** An array value's element spans (start, end, flat), found by the same scan that found its end. */
  readonly elements: number[] | undefined
}

function memberValue(text: string, member: MemberSpan, valueEnds: Map<number, number>): unknown {
  const { valueStart: start, valueEnd: end, elements } = member
  valueEnds.set(start, end)
  if (end - start < reuseMinChars) return JSON.parse(text.slice(start, end))
  if (elements === undefined) return reused(text.slice(start, end))
  const out: unknown[] = Array.from({ length: elements.length / 2 })
  for (let index = 0; index < elements.length; index += 2) {
    const from = elements[index] as number
    const to = elements[index + 1] as number
    valueEnds.set(from, to)
    const slice = text.slice(from, to)
    out[index / 2] = to - from < reuseMinChars ? JSON.parse(slice) : reused(slice)
  }
  return out
}

/**
 * The value parsed from this exact text before, else parsed now, frozen (it is shared) and kept.
 * Found by a short fingerprint, then the whole text compared: hashing every element's text cost
 * more than parsing it again. A hit only marks the entry (moving it to the Map's end on every hit
 * cost a fifth of the lookups on a 300-element history).
 */
function reused(slice: string): unknown {
  const key = fingerprint(slice)
  const known = memo.get(key)
  if (known !== undefined && known.text === slice) {
    known.used = true
    return known.value
  }
  const value = deepFreeze(JSON.parse(slice))
  if (slice.length > memoMaxEntryChars) return value
  if (known !== undefined) {
    memo.delete(key)
    memoChars -= known.text.length
  }
  memo.set(detached(key), { text: detached(slice), value, used: false })
  memoChars += slice.length
  if (memoChars > memoMaxChars) evictOldest()
  return value
}

/** Oldest first, except that an entry found again since it was kept (or last passed over) goes to the back once. */
function evictOldest(): void {
  for (const [oldest, entry] of memo) {
    if (memoChars <= memoMaxChars) return
    memo.delete(oldest)
    if (entry.used) {
      entry.used = false
      memo.set(oldest, entry)
    } else memoChars -= entry.text.length
  }
}

/** A copy of a slice that does not keep the whole body alive (V8 makes a slice point into its parent string). */
function detached(slice: string): string {
  return ` ${slice}`.slice(1)
}

/** Length and both ends: elements that differ mostly differ there (ids, indexes, a closing field). */
function fingerprint(slice: string): string {
  return `${slice.length}:${slice.slice(0, 96)}${slice.slice(-96)}`
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  for (const inner of Object.values(value)) deepFreeze(inner)
  return Object.freeze(value)
}

/** The spans of a top-level object's members, or undefined when the text is not one (JSON.parse then says why). */
export function topLevelMembers(text: string): MemberSpan[] | undefined {
  let index = skipJsonSpace(text, 0)
  if (text.charCodeAt(index) !== 0x7b) return undefined
  index = skipJsonSpace(text, index + 1)
  const members: MemberSpan[] = []
  if (text.charCodeAt(index) === 0x7d) return skipJsonSpace(text, index + 1) === text.length ? members : undefined
  for (;;) {
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
    index = skipJsonSpace(text, valueEnd)
    const next = text.charCodeAt(index)
    if (next === 0x7d) return skipJsonSpace(text, index + 1) === text.length ? members : undefined
    if (next !== 0x2c) return undefined
    index = skipJsonSpace(text, index + 1)
  }
}

/**
 * Start and end offsets of each element of the array opening at `start` (flat), and one past its
 * close; `end` is -1 when it is not well formed (or holds a literal a double would change).
 */
function arrayElements(text: string, start: number): { readonly spans: number[]; readonly end: number } {
  const spans: number[] = []
  let index = skipJsonSpace(text, start + 1)
  if (text.charCodeAt(index) === 0x5d) return { spans, end: index + 1 }
  for (;;) {
    const elementEnd = endOfValue(text, index)
    if (elementEnd < 0) return { spans, end: -1 }
    spans.push(index, elementEnd)
    index = skipJsonSpace(text, elementEnd)
    const next = text.charCodeAt(index)
    if (next === 0x5d) return { spans, end: index + 1 }
    if (next !== 0x2c) return { spans, end: -1 }
    index = skipJsonSpace(text, index + 1)
  }
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
