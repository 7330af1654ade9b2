import { arrayElementsAfter, membersAfter, type MemberSpan } from './json-members.ts'

/**
 * A chat client's next body starts with most of its previous one: the same fields and the same
 * history, up to the last message or two (where it moves its cache markers) and what it appends.
 * A recent parse whose text this one starts with lends the members and array elements of the shared
 * prefix, already found and parsed, so only the rest is scanned and looked up (docs/proxy.md, the hot path).
 */
export interface PreviousParse {
  readonly text: string
  readonly members: readonly MemberSpan[]
  readonly keys: readonly string[]
  /** Per member, its value (an array member's: the array of its elements' values). */
  readonly values: readonly unknown[]
}

/** What a new text shares with a previous parse, and its members as topLevelMembers finds them. */
export interface CarriedPrefix {
  readonly previous: PreviousParse
  readonly members: MemberSpan[]
  /** Members wholly in the shared prefix. */
  readonly sharedMembers: number
  /** Elements of the next member (an array) in the shared prefix; 0 when the prefix ends between members. */
  readonly sharedElements: number
}

/** Parses kept to carry from: a few conversations going on at once. */
const keptParses = 4
/** Texts longer than this are not kept (each kept text is held until four newer ones push it out). */
const keptMaxChars = 1024 * 1024
const recent: PreviousParse[] = []

/** Remembers a parse for the next texts to carry from. */
export function keepParse(parse: PreviousParse): void {
  if (parse.text.length > keptMaxChars) return
  recent.unshift(parse)
  if (recent.length > keptParses) recent.pop()
}

/** A point in a parse where scanning can go on: after member `member`'s value, or after its element `element`. */
interface Boundary {
  readonly end: number
  readonly member: number
  readonly element: number
}

/** The longest prefix a recent parse shares with `text`, with the members found past it; undefined when none helps. */
export function carriedPrefix(text: string): CarriedPrefix | undefined {
  for (const previous of recent) {
    // The same text again takes one comparison.
    const differsAt = text === previous.text ? text.length : firstDifference(text, previous.text)
    const shared = lastBoundaryBefore(previous, differsAt)
    if (shared === undefined) continue
    const carried = resume(text, previous, shared)
    if (carried !== undefined) return carried
  }
  return undefined
}

/**
 * The last boundary up to which (and one character past, which settles where a number ends) the
 * texts are the same, given where they first differ: the members in order, then a binary search of
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

/** Below this many characters the search compares one by one. */
const linearBelow = 64

/**
 * The first index where the texts differ (the shorter one's length when one starts the other).
 * Halving the unsettled range, each native comparison covers only what is not yet known the same:
 * about one text's length compared in all, where comparing the whole prefix at each step of the
 * boundaries' search compared it some nine times for a 300-message history.
 */
export function firstDifference(text: string, before: string): number {
  let same = 0
  let unsure = Math.min(text.length, before.length)
  while (unsure - same > linearBelow) {
    const middle = (same + unsure) >> 1
    if (text.slice(same, middle) === before.slice(same, middle)) same = middle
    else unsure = middle
  }
  while (same < unsure && text.charCodeAt(same) === before.charCodeAt(same)) same++
  return same
}

/** The new text's members: the shared ones as the previous parse found them, the rest scanned from the boundary. */
function resume(text: string, previous: PreviousParse, shared: Boundary): CarriedPrefix | undefined {
  const members = previous.members.slice(0, shared.member)
  if (shared.element < 0) {
    members.push(previous.members[shared.member] as MemberSpan)
    const all = membersAfter(text, shared.end, members)
    return all && { previous, members: all, sharedMembers: shared.member + 1, sharedElements: 0 }
  }
  const open = previous.members[shared.member] as MemberSpan
  const spans = (open.elements ?? []).slice(0, (shared.element + 1) * 2)
  const elements = arrayElementsAfter(text, shared.end, spans)
  if (elements.end < 0) return undefined
  members.push({ ...open, valueEnd: elements.end, elements: elements.spans })
  const all = membersAfter(text, elements.end, members)
  return all && { previous, members: all, sharedMembers: shared.member, sharedElements: shared.element + 1 }
}
