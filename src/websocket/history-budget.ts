/**
 * The memory every socket's kept conversation takes, together, against one ceiling
 * (`websocket.maxHistoryBytes`): a socket whose history would pass it is forwarded as sent instead.
 */
export class HistoryBudget {
  readonly max: number
  #used = 0
  /** Histories given up because the ceiling was reached. */
  #refusals = 0

  constructor(max: number) {
    this.max = max
  }

  get used(): number {
    return this.#used
  }

  get refusals(): number {
    return this.#refusals
  }

  /** Swaps a socket's holding of `from` bytes for `to`; false (and nothing held any more) when `to` does not fit. */
  resize(from: number, to: number): boolean {
    this.#used -= from
    if (this.#used + to > this.max) {
      this.#refusals++
      return false
    }
    this.#used += to
    return true
  }

  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes)
  }
}
