import type { TokenEstimator } from '../../rewrite/estimate.ts'
import { noteMessagesTokens } from '../../rewrite/prompt-tokens.ts'
import type { MessageView } from '../../rewrite/types.ts'
import { RecentWalks } from '../../util/recent-walks.ts'
import { noteSharedStart, sharedStartOf } from '../../util/list-lineage.ts'

/**
 * A body's message views and whether one of its messages holds a compaction block, carried: the
 * parse says which recent list a body's messages start like, byte for byte
 * (reuse-parsed-elements.ts `sharedStartOf`), and the views of those first messages were the same
 * then. So a request of a growing conversation views its new messages only, instead of looking up
 * every re-sent message's view (twice: the estimate and the reference count). A message the parse
 * did not freeze (a short one, parsed anew each request) is still viewed from this request's own
 * object, as before. Pure: no I/O.
 */
export interface ListViews {
  readonly views: readonly MessageView[]
  /** A message holds a compaction block (messages-adapter.ts `managesContext`). */
  readonly holdsCompaction: boolean
}

interface ViewedList {
  readonly list: readonly unknown[]
  readonly views: readonly MessageView[]
  /** Indexes of the messages that were not frozen. */
  readonly unfrozen: readonly number[]
  /** A frozen message holds a compaction block (then nothing is carried). */
  readonly frozenCompaction: boolean
  /** The tokens of the views before each index (one more entry: the total). */
  readonly tokensBefore: readonly number[]
}

/** Longer lists are viewed message by message each time. */
const keptMaxMessages = 4096
/** Per estimator, the lists viewed last (a few conversations at once). */
const recent = new WeakMap<TokenEstimator, RecentWalks<ViewedList>>()

/** `list`'s views (`viewOne` for each message not carried) and whether a message holds a compaction block. */
export function listViews(
  list: readonly unknown[],
  estimator: TokenEstimator,
  viewOne: (message: unknown, index: number) => MessageView,
  holdsCompaction: (message: unknown) => boolean,
): ListViews {
  const start = sharedStartOf(list)
  let kept = recent.get(estimator)
  if (kept === undefined) recent.set(estimator, (kept = new RecentWalks(4)))
  const before = start?.from === undefined ? undefined : find(kept, start.from)
  const shared = before === undefined || before.frozenCompaction ? 0 : (start?.shared as number)
  const views = before === undefined ? [] : before.views.slice(0, shared)
  const unfrozen: number[] = []
  let compaction = false
  let frozenCompaction = false
  // The messages carried that were not frozen are this request's own objects: viewed from them.
  for (const index of before?.unfrozen ?? []) {
    if (index >= shared) break
    const message = list[index]
    views[index] = viewOne(message, index)
    unfrozen.push(index)
    compaction ||= holdsCompaction(message)
  }
  for (let index = shared; index < list.length; index++) {
    const message = list[index]
    views.push(viewOne(message, index))
    const holds = holdsCompaction(message)
    compaction ||= holds
    if (!Object.isFrozen(message)) unfrozen.push(index)
    else frozenCompaction ||= holds
  }
  // Only lists the parse remembers can be carried from: a body small enough for the parse carry.
  // A carried message viewed again from this request's object has the tokens it had: the sums before the shared end hold.
  const tokensBefore = before === undefined ? [0] : before.tokensBefore.slice(0, shared + 1)
  for (let index = shared; index < views.length; index++)
    tokensBefore.push((tokensBefore[index] as number) + (views[index] as MessageView).tokens)
  noteMessagesTokens(views, tokensBefore[views.length] as number)
  if (start !== undefined && list.length <= keptMaxMessages) {
    kept.keep({ list, views, unfrozen, frozenCompaction, tokensBefore })
    // The first views have the same roles, tokens and calls as the earlier list's (prefix-break.ts reads it).
    noteSharedStart(views, before?.views, shared)
  }
  return { views, holdsCompaction: compaction }
}

function find(kept: RecentWalks<ViewedList>, list: readonly unknown[]): ViewedList | undefined {
  for (const viewed of kept) if (viewed.list === list) return viewed
  return undefined
}
