/**
 * The last few walks over a conversation's messages (or bytes), kept so the next request's walk can
 * go on from the longest prefix it shares with one of them: a client re-sends its history, and a few
 * conversations go on at once. Pure: no I/O.
 */
export class RecentWalks<T> {
  readonly #kept: T[] = []
  readonly #size: number

  constructor(size: number) {
    this.#size = size
  }

  /**
   * The kept walk sharing the most (by `sharedLength`, in the newest-first order; the first of equals
   * wins) and how much; or, at once, the first whose share `isWhole` says is the entire request.
   * `most` bounds what a kept walk can share (its length): one that could neither share more than
   * the best so far nor be whole is not compared (a growing conversation's older walks are shorter
   * than its newest, which the request shares whole). `isWhole` must hold at `most` whenever it
   * holds at a smaller share (whole means sharing all there is).
   */
  longest(
    sharedLength: (kept: T) => number,
    isWhole: (kept: T, shared: number) => boolean,
    most: (kept: T) => number,
  ): { readonly from: T | undefined; readonly shared: number; readonly whole: boolean } {
    let from: T | undefined
    let shared = 0
    for (const kept of this.#kept) {
      const bound = most(kept)
      if (bound <= shared && !isWhole(kept, bound)) continue
      const length = sharedLength(kept)
      if (isWhole(kept, length)) return { from: kept, shared: length, whole: true }
      if (length > shared) [from, shared] = [kept, length]
    }
    return { from, shared, whole: false }
  }

  /** Kept as the newest; the oldest goes when there are more than the size. */
  keep(walk: T): void {
    this.#kept.unshift(walk)
    if (this.#kept.length > this.#size) this.#kept.pop()
  }

  [Symbol.iterator](): Iterator<T> {
    return this.#kept[Symbol.iterator]()
  }
}
