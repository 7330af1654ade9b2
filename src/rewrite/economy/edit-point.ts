/**
 * Where a batch should start, so the cache marker kept ahead of it pays: clearing an old result moves
 * the edit point back over everything between it and the next result the batch clears, and all of
 * that is written again. A small result early in the conversation saves a few tokens per request and
 * costs a rewrite of thousands, so the batch starts after it instead (it stays whole, like a result
 * smaller than its note).
 */
export interface EditPointPrices {
  readonly read: number
  readonly write: number
  /** Requests ahead that would read the saving. */
  readonly requestsAhead: number
}

/** What reaching back to one result is worth: its saving over the requests ahead, less the rewrite it causes (uncached-input tokens). */
export function reachBackValue(savedTokens: number, rewrittenTokens: number, prices: EditPointPrices): number {
  return savedTokens * prices.read * prices.requestsAhead - rewrittenTokens * (prices.write - prices.read)
}

/**
 * The first of `candidates` (oldest first) a batch should start at: the start that leaves the most
 * after weighing, for each candidate in front of it, what clearing it saves over the requests ahead
 * against rewriting what lies between it and the next candidate (itself counted at its replacement's
 * size). Weighing whole stretches, not one neighbour at a time, keeps a batch from reaching back to
 * a cluster of small results far before the rest. `position(i)` is the tokens before candidate i,
 * unedited; the last candidate is always in.
 */
export function batchStart(
  count: number,
  saved: (index: number) => number,
  position: (index: number) => number,
  prices: EditPointPrices,
): number {
  let start = count - 1
  let best = 0
  let running = 0
  for (let index = count - 2; index >= 0; index--) {
    const rewritten = position(index + 1) - position(index) - saved(index)
    running += reachBackValue(saved(index), rewritten, prices)
    // Ties reach back: clearing more for the same price is no worse.
    if (running >= best) {
      best = running
      start = index
    }
  }
  return Math.max(0, start)
}
