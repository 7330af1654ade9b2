import { RecentWalks } from './recent-walks.ts'
import { arrayElementsAfter, membersAfter, type MemberSpan } from './json-members.ts'

/**
 * A chat client's next body starts with most of its previous one: the same fields and the same
 * history, up to the last message or two (where it moves its cache markers) and what it appends.
 * A recent parse whose bytes this body starts with lends the members and array elements of the
 * shared prefix, already found and parsed, so only the rest is scanned, decoded and looked up
 * (docs/proxy.md, the hot path).
 */
export interface PreviousParse {
  readonly bytes: Buffer
  readonly members: readonly MemberSpan[]
  readonly keys: readonly string[]
  /** Per member, its value (an array member's: the array of its elements' values). */
  readonly values: readonly unknown[]
}

/** What a new body shares with a previous parse, and its members as topLevelMembers finds them. */
export interface CarriedPrefix {
  readonly previous: PreviousParse
  readonly members: MemberSpan[]
  /** Members wholly in the shared prefix. */
  readonly sharedMembers: number
  /** Elements of the next member (an array) in the shared prefix; 0 when the prefix ends between members. */
  readonly sharedElements: number
}

/** Bodies longer than this are not kept (each kept body is held until four newer ones push it out). */
export const keptMaxBytes = 1024 * 1024
/** Parses kept to carry from: a few conversations going on at once. */
const recent = new RecentWalks<PreviousParse>(4)

/** Remembers a parse for the next bodies to carry from. */
export function keepParse(parse: PreviousParse): void {
  if (parse.bytes.length > keptMaxBytes) return
  recent.keep(parse)
}

/** A point in a parse where scanning can go on: after member `member`'s value, or after its element `element`. */
interface Boundary {
  readonly end: number
  readonly member: number
  readonly element: number
}

/** The longest prefix a recent parse shares with `bytes`, with the members found past it; undefined when none helps. */
export function carriedPrefix(bytes: Buffer): CarriedPrefix | undefined {
  for (const previous of recent) {
    // The same body again (a retry, a refit) takes one comparison.
    const same = bytes.length === previous.bytes.length && bytes.equals(previous.bytes)
    const differsAt = same ? bytes.length : firstDifference(bytes, previous.bytes)
    const shared = lastBoundaryBefore(previous, differsAt)
    if (shared === undefined) continue
    const carried = resume(bytes, previous, shared)
    if (carried !== undefined) return carried
  }
  return undefined
}

/**
 * The last boundary up to which (and one character past, which settles where a number ends) the
 * bodies are the same, given where they first differ: the members in order, then a binary search of
 * the elements of the first member not wholly shared.
 */
function lastBoundaryBefore(previous: PreviousParse, differsAt: number): Boundary | undefined {
  let found: Boundary | undefined
  for (const [index, member] of previous.members.entries()) {
    if (member.valueEnd + 1 <= differsAt) {
      found = { end: member.valueEnd, member: index, element: -1 }
      continue
    }
    const spans = member.elements ?? []
    let low = 0
    let high = spans.length / 2 - 1
    while (low <= high) {
      const middle = (low + high) >> 1
      const end = spans[middle * 2 + 1] as number
      if (end + 1 <= differsAt) {
        found = { end, member: index, element: middle }
        low = middle + 1
      } else high = middle - 1
    }
    return found
  }
  return found
}

/** Below this many bytes the search compares one by one. */
const linearBelow = 64

/**
 * The first offset where the bytes differ (the shorter one's length when one starts the other).
 * Halving the unsettled range, each native comparison (a memcmp) covers only what is not yet known
 * the same: about one body's length compared in all.
 */
export function firstDifference(bytes: Buffer, before: Buffer): number {
  let same = 0
  let unsure = Math.min(bytes.length, before.length)
  while (unsure - same > linearBelow) {
    const middle = (same + unsure) >> 1
    if (bytes.compare(before, same, middle, same, middle) === 0) same = middle
    else unsure = middle
  }
  while (same < unsure && bytes[same] === before[same]) same++
  return same
}

/** The new body's members: the shared ones as the previous parse found them, the rest scanned from the boundary. */
function resume(bytes: Buffer, previous: PreviousParse, shared: Boundary): CarriedPrefix | undefined {
  const members = previous.members.slice(0, shared.member)
  if (shared.element < 0) {
    members.push(previous.members[shared.member] as MemberSpan)
    const all = membersAfter(bytes, shared.end, members)
    return all && { previous, members: all, sharedMembers: shared.member + 1, sharedElements: 0 }
  }
  const open = previous.members[shared.member] as MemberSpan
  const spans = (open.elements ?? []).slice(0, (shared.element + 1) * 2)
  const elements = arrayElementsAfter(bytes, shared.end, spans)
  if (elements.end < 0) return undefined
  members.push({ ...open, valueEnd: elements.end, elements: elements.spans })
  const all = membersAfter(bytes, elements.end, members)
  return all && { previous, members: all, sharedMembers: shared.member, sharedElements: shared.element + 1 }
}
