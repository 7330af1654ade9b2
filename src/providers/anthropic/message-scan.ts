import type { Json } from '../../util/json.ts'
import { RecentWalks } from '../../util/recent-walks.ts'
import { blockFactsOf, type BlockFacts } from './block-facts.ts'
import type { ResultMark } from './next-edit-bridge.ts'

/** A block, by its position in the cache's order, and the message holding it. */
export interface BlockAt {
  readonly position: number
  readonly message: number
}

export interface MessageScan {
  /** Per message, the position of its last block that may carry a marker (-1: none). */
  readonly lastMarkable: number[]
  /** Markers the client put on message blocks (and inside tool results), with their positions. */
  readonly markers: { readonly marked: unknown; readonly position: number }[]
  /** The last markable block before the result the next batch starts at, and the message holding that block. */
  readonly nextEdit?: BlockAt
  /** The same before the result the batch after this request's will start at. */
  readonly followingEdit?: BlockAt
  /** With a following edit asked for: the same for every result, in order (where a bridge may go). */
  readonly resultMarks?: readonly ResultMark[]
  /** Position after the last block. */
  readonly end: number
  /** Per message, its first block's position; one more entry: the end. Read-only: the walk keeps it for the next request. */
  readonly positions: readonly number[]
}

/**
 * A walk's reading of its messages, whatever the edits asked for: a client re-sends its history,
 * so the next request's walk takes the part for the messages it shares as its first ones (the same
 * frozen objects, or messages whose block facts are the same and hold no marker) and reads only the rest.
 */
interface Walked {
  readonly start: number
  readonly messages: readonly Json[]
  /** Per message, whether it was frozen (then it still holds what it held: the same object is the same message). */
  readonly frozen: readonly boolean[]
  readonly facts: readonly BlockFacts[]
  readonly lastMarkable: readonly number[]
  readonly markers: readonly { readonly marked: unknown; readonly position: number }[]
  /** Results that have a markable block before them, in order: their ids, and that block (searched by id alone). */
  readonly resultIds: readonly unknown[]
  readonly resultsAt: readonly BlockAt[]
  /** Per message, its first block's position; one more entry: the end. */
  readonly positions: readonly number[]
  /** Per message, the last markable block up to it (itself included). */
  readonly markableThrough: readonly (BlockAt | undefined)[]
  /** Per message, how many markers and results come before it; one more entry: the totals. */
  readonly markersBefore: readonly number[]
  readonly resultsBefore: readonly number[]
}

/** Longer message lists are walked every time. */
const keptMaxMessages = 4096
/** Conversations going on at once whose walks are kept (as the parse and the plan's facts keep theirs). */
const recent = new RecentWalks<Walked>(4)

/** One walk over the messages, in the cache's order, from `start` (the blocks of tools and system come first). */
export function scanMessages(
  messages: readonly Json[],
  start: number,
  nextEditResult: string | undefined,
  followingEditResult: string | undefined,
): MessageScan {
  const walked = walk(messages, start)
  const findAt = (id: string | undefined): BlockAt | undefined => {
    const index = walked.resultIds.indexOf(id)
    return index < 0 ? undefined : walked.resultsAt[index]
  }
  const nextEdit = findAt(nextEditResult)
  const followingEdit = findAt(followingEditResult)
  const resultMarks =
    followingEditResult === undefined
      ? undefined
      : walked.resultIds.flatMap((id, index) =>
          typeof id === 'string' ? [{ id, ...(walked.resultsAt[index] as BlockAt) }] : [],
        )
  return {
    // The caller may keep what it is handed; the walk's own lists stay as they are for the next request.
    lastMarkable: walked.lastMarkable.slice(),
    markers: walked.markers.slice(),
    ...(nextEdit ? { nextEdit } : {}),
    ...(followingEdit ? { followingEdit } : {}),
    ...(resultMarks ? { resultMarks } : {}),
    end: walked.positions[messages.length] as number,
    positions: walked.positions,
  }
}

function walk(messages: readonly Json[], start: number): Walked {
  const { from, shared, whole } = recent.longest(
    (kept) => (kept.start === start ? sharedLength(kept, messages) : -1),
    (kept, length) => length === messages.length && length === kept.messages.length,
    (kept) => (kept.start === start ? Math.min(kept.messages.length, messages.length) : -1),
  )
  if (whole) return from as Walked
  const walked = walkFrom(from, shared, messages, start)
  if (messages.length <= keptMaxMessages) recent.keep(walked)
  return walked
}

/** How many first messages the walk shares with `messages`: the same objects, or the same facts with no marker. */
function sharedLength(kept: Walked, messages: readonly Json[]): number {
  const most = Math.min(kept.messages.length, messages.length)
  let index = 0
  while (index < most) {
    const message = messages[index] as Json
    // Only a frozen message is sure to hold what it held then; any other is compared by its facts.
    const same = message === kept.messages[index] && kept.frozen[index] === true
    if (!same && !sameFacts(kept.facts[index] as BlockFacts, blockFactsOf(message))) break
    index++
  }
  return index
}

/** Markers are compared by identity in the walk's output: a message holding one is shared only as the same object. */
function sameFacts(before: BlockFacts, facts: BlockFacts): boolean {
  return (
    before === facts ||
    (before.count === facts.count &&
      before.lastMarkable === facts.lastMarkable &&
      before.markers.length === 0 &&
      facts.markers.length === 0 &&
      before.results.length === facts.results.length &&
      before.results.every(
        (result, index) =>
          result.id === facts.results[index]?.id && result.markableBefore === facts.results[index]?.markableBefore,
      ))
  )
}

/** The first `shared` messages' walk taken from `from`, the rest read block fact by block fact. */
function walkFrom(from: Walked | undefined, shared: number, messages: readonly Json[], start: number): Walked {
  const facts = upTo(from?.facts, shared)
  const frozen = upTo(from?.frozen, shared)
  const lastMarkable = upTo(from?.lastMarkable, shared)
  const positions = upTo(from?.positions, shared)
  const markableThrough = upTo(from?.markableThrough, shared)
  const markersBefore = upTo(from?.markersBefore, shared)
  const resultsBefore = upTo(from?.resultsBefore, shared)
  const markers = upTo(from?.markers, from?.markersBefore[shared] ?? 0)
  const resultIds = upTo(from?.resultIds, from?.resultsBefore[shared] ?? 0)
  const resultsAt = upTo(from?.resultsAt, from?.resultsBefore[shared] ?? 0)
  let position = from?.positions[shared] ?? start
  let markableBefore = shared > 0 ? from?.markableThrough[shared - 1] : undefined
  for (let index = shared; index < messages.length; index++) {
    const message = blockFactsOf(messages[index] as Json)
    facts.push(message)
    frozen.push(Object.isFrozen(messages[index]))
    positions.push(position)
    markersBefore.push(markers.length)
    resultsBefore.push(resultIds.length)
    for (const marker of message.markers) markers.push({ marked: marker.marked, position: position + marker.offset })
    // The last markable block before the result, in this message or an earlier one.
    for (const result of message.results) {
      const at =
        result.markableBefore >= 0 ? { position: position + result.markableBefore, message: index } : markableBefore
      if (at === undefined) continue
      resultIds.push(result.id)
      resultsAt.push(at)
    }
    const last = message.lastMarkable >= 0 ? position + message.lastMarkable : -1
    if (last >= 0) markableBefore = { position: last, message: index }
    markableThrough.push(markableBefore)
    lastMarkable.push(last)
    position += message.count
  }
  positions.push(position)
  markersBefore.push(markers.length)
  resultsBefore.push(resultIds.length)
  return {
    start,
    messages: messages.slice(),
    frozen,
    facts,
    lastMarkable,
    markers,
    resultIds,
    resultsAt,
    positions,
    markableThrough,
    markersBefore,
    resultsBefore,
  }
}

/** The first `count` entries of a kept walk's list, as a new list to extend. */
function upTo<T>(list: readonly T[] | undefined, count: number): T[] {
  return (list ?? []).slice(0, count)
}
