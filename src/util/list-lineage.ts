import { RecentWalks } from './recent-walks.ts'

/**
 * Which earlier list a new list starts like, noted by whoever built it: the parse (an array member
 * whose first elements are a recent body's, byte for byte: reuse-parsed-elements.ts) and the message
 * views (a view list whose first views are a recent list's: providers/anthropic/message-views.ts). A
 * walk kept for the earlier list's first elements then holds for the new one's without reading them
 * again, so a request of a growing conversation reads its new messages only. Pure: no I/O.
 */
export interface SharedStart {
  readonly list: readonly unknown[]
  /** The earlier list; undefined when the builder knows of none (the list may still be carried from later). */
  readonly from: readonly unknown[] | undefined
  /** How many first elements the two share (0 with no earlier list). */
  readonly shared: number
}

/** The lists of the last few requests (a body has a few array members, a request two view lists): held until newer ones push them out. */
const recent = new RecentWalks<SharedStart>(16)

/** Notes that `list` starts like `from` for `shared` elements (or, with `from` undefined, that it was built where it may be carried from). */
export function noteSharedStart(list: readonly unknown[], from: readonly unknown[] | undefined, shared: number): void {
  recent.keep({ list, from: shared > 0 ? from : undefined, shared: from === undefined ? 0 : shared })
}

/** What was noted of `list`, while it is among the last noted; undefined otherwise. */
export function sharedStartOf(list: readonly unknown[]): SharedStart | undefined {
  for (const kept of recent) if (kept.list === list) return kept
  return undefined
}

/** How many first elements `list` is known to share with `earlier` (0 when nothing says so). */
export function knownSharedWith(list: readonly unknown[], earlier: readonly unknown[]): number {
  const start = sharedStartOf(list)
  return start !== undefined && start.from === earlier ? start.shared : 0
}
