/**
 * Whether a batch should reach back to a result: clearing it moves the edit point back over
 * everything between it and the next result the batch clears, and all of that is written again.
 * A small result early in the conversation saves a few tokens per request and costs a rewrite of
 * thousands, so the batch starts after it instead (it stays whole, like a result smaller than its note).
 */
export interface EditPointPrices {
  readonly read: number
  readonly write: number
  /** Requests ahead that would read the saving. */
  readonly requestsAhead: number
}

export function worthReachingBack(savedTokens: number, gapTokens: number, prices: EditPointPrices): boolean {
  return savedTokens * prices.read * prices.requestsAhead >= gapTokens * (prices.write - prices.read)
}

/**
 * The first of `candidates` (oldest first) a batch should start at. `saved(i)` is what clearing
 * candidate i saves per request, `position(i)` the tokens before it, unedited; the front is trimmed
 * while a candidate does not pay for rewriting what lies between it and the next one (itself
 * counted at its replacement's size, since that is what is written).
 */
export function batchStart(
  count: number,
  saved: (index: number) => number,
  position: (index: number) => number,
  prices: EditPointPrices,
): number {
  let start = 0
  while (start < count - 1) {
    const rewritten = position(start + 1) - position(start) - saved(start)
    if (worthReachingBack(saved(start), rewritten, prices)) break
    start++
  }
  return start
}
