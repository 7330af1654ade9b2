/**
 * A chat client re-sends its whole history on every request, so nearly all of a body's text is
 * text the process parsed a moment ago. A top-level object is parsed here member by member from
 * its UTF-8 bytes, and each long member (and each element of a long array member: the messages,
 * the input items, the tools) is decoded on its own and looked up by its exact text before
 * JSON.parse runs: an unchanged element comes back as the same frozen value, its strings the same
 * strings, so token counts and views memoised on them are found without hashing their text again.
 * The prefix a recent body shared is not even decoded (parse-carry.ts): the body is never one
 * string. The result equals JSON.parse of the decoded body in value and key order. The same scan
 * looks at every number literal outside strings: one a double cannot hold, or anything the scanner
 * does not expect, and the caller parses the text its own way.
 */
import { topLevelMembers, type MemberSpan } from './json-members.ts'
import { carriedPrefix, keepParse, keptMaxBytes, type CarriedPrefix } from './parse-carry.ts'
import { noteSharedStart } from './list-lineage.ts'

export { topLevelMembers, type MemberSpan } from './json-members.ts'

/** Elements shorter than this parse faster than they are looked up. */
const reuseMinBytes = 128
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

/** Bodies longer than this (in bytes) are parsed without the memo. */
export const reuseMaxBytes = memoMaxChars / 2

/** The characters the memo holds as keys now (for tests and the budget's own check). */
export function reuseMemoChars(): number {
  return memoChars
}

/**
 * Parses a top-level object (its UTF-8 bytes) like JSON.parse, reusing the values of members and
 * elements seen before; undefined when `bytes` is not an object this scan can follow or holds a
 * number literal a double would change. Throws JSON.parse's error for a member that is not valid JSON.
 */
export function parseReusingElements(bytes: Buffer): ReusedParse | undefined {
  // A body this large would push out most of what the memo holds, and a few of them take turns
  // missing: the memo's copies and lookups then cost twice a plain parse (27 MB bodies, measured).
  if (bytes.length > reuseMaxBytes) return undefined
  const carried = carriedPrefix(bytes)
  const members = carried?.members ?? topLevelMembers(bytes)
  if (members === undefined) return undefined
  const out: Record<string, unknown> = {}
  const keys: string[] = []
  const values: unknown[] = []
  for (const [index, member] of members.entries()) {
    const key =
      carried !== undefined && index < carried.sharedMembers
        ? (carried.previous.keys[index] as string)
        : (JSON.parse(bytes.toString('utf8', member.keyStart, member.keyEnd)) as string)
    // An own `__proto__` key would set the prototype when assigned: JSON.parse makes it a plain property.
    if (key === '__proto__') return undefined
    const value = memberValue(bytes, member, lentBy(carried, index), bytes.length <= keptMaxBytes)
    out[key] = value
    keys.push(key)
    values.push(value)
  }
  keepParse({ bytes, members, keys, values })
  return { value: out, members }
}

/** What a previous parse lends member `index`: its whole value, or its first elements' values; nothing past the shared prefix. */
function lentBy(carried: CarriedPrefix | undefined, index: number): Lent | undefined {
  if (carried === undefined) return undefined
  const value = carried.previous.values[index]
  if (index < carried.sharedMembers) return { value, elements: Number.POSITIVE_INFINITY }
  if (index === carried.sharedMembers && carried.sharedElements > 0) return { value, elements: carried.sharedElements }
  return undefined
}

/** A previous parse's value for a member, whole (`elements` infinite) or for the first `elements` elements of an array. */
interface Lent {
  readonly value: unknown
  readonly elements: number
}

/** Only values no request can change are shared: frozen ones (from the memo) and primitives; the rest are parsed again. */
function shareable(value: unknown): boolean {
  return typeof value !== 'object' || value === null || Object.isFrozen(value)
}

export interface ReusedParse {
  readonly value: Record<string, unknown>
  /**
   * Where each member and each element of an array member starts and ends (byte offsets): a writer
   * splicing edits into the same bytes skips unchanged parts without scanning them again.
   */
  readonly members: readonly MemberSpan[]
}

function memberValue(bytes: Buffer, member: MemberSpan, lent: Lent | undefined, remembered: boolean): unknown {
  const { valueStart: start, valueEnd: end, elements } = member
  // A whole member lent is a scalar or a frozen value (an array member's value is its own new array).
  if (lent !== undefined && lent.elements === Number.POSITIVE_INFINITY && shareable(lent.value)) return lent.value
  if (end - start < reuseMinBytes) return JSON.parse(bytes.toString('utf8', start, end))
  if (elements === undefined) return reused(bytes.toString('utf8', start, end))
  const lentElements = lent !== undefined && Array.isArray(lent.value) ? (lent.value as unknown[]) : undefined
  // Pushed one by one: `Array.from({ length })` walks its array-like generically (30 µs for 340 elements).
  const out: unknown[] = []
  for (let index = 0; index < elements.length; index += 2) {
    const from = elements[index] as number
    const to = elements[index + 1] as number
    const element = index / 2
    const known = lentElements !== undefined && element < (lent?.elements ?? 0) ? lentElements[element] : undefined
    if (known !== undefined && shareable(known) && to - from >= reuseMinBytes) {
      out.push(known)
      continue
    }
    const slice = bytes.toString('utf8', from, to)
    out.push(to - from < reuseMinBytes ? JSON.parse(slice) : reused(slice))
  }
  if (remembered) {
    // Elements in the shared prefix are the same bytes as the lending array's (parse-carry.ts).
    const shared = lentElements === undefined ? 0 : Math.min(lent?.elements ?? 0, out.length, lentElements.length)
    noteSharedStart(out, lentElements, shared)
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
  memo.set(key, { text: slice, value, used: false })
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

/** Length and both ends: elements that differ mostly differ there (ids, indexes, a closing field). */
function fingerprint(slice: string): string {
  return `${slice.length}:${slice.slice(0, 96)}${slice.slice(-96)}`
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  for (const inner of Object.values(value)) deepFreeze(inner)
  return Object.freeze(value)
}
