import type { SseTap } from './sse-tap.ts'

/**
 * An SSE tap fed one chunk behind (unless `hold`, when each chunk is read before it is sent): whatever
 * asks what it has seen (the event boundary, the count) or ends it first reads the chunk held back.
 */
export class TapBehind {
  readonly #tap: SseTap
  readonly #hold: boolean
  #behind: Buffer | undefined
  #ended = false

  constructor(tap: SseTap, hold: boolean) {
    this.#tap = tap
    this.#hold = hold
  }

  push(chunk: Buffer): void {
    if (this.#hold) {
      this.#tap.push(chunk)
      return
    }
    this.catchUp()
    this.#behind = chunk
  }

  end(): void {
    this.catchUp()
    if (this.#ended) return
    this.#ended = true
    this.#tap.end()
  }

  get atEventBoundary(): boolean {
    this.catchUp()
    return this.#tap.atEventBoundary
  }

  get eventCount(): number {
    this.catchUp()
    return this.#tap.eventCount
  }

  /** Reads the chunk held back, if any. */
  catchUp(): void {
    const behind = this.#behind
    if (behind === undefined) return
    this.#behind = undefined
    this.#tap.push(behind)
  }
}
