/**
 * Counts, per session, the requests on which ctxgate had to cut whole old rounds or turns anew.
 * A session that needs it again and again is growing by more than a round per request: often an
 * agent repeating itself. Says when to warn: at the threshold, then at each doubling, so one
 * looping session gives a handful of log lines, not one per request.
 */
export class DropLoopWatch {
  readonly #counts = new Map<string, number>()
  readonly #threshold: number
  readonly #maxSessions: number

  constructor(options: { readonly threshold?: number; readonly maxSessions?: number } = {}) {
    this.#threshold = options.threshold ?? 20
    this.#maxSessions = options.maxSessions ?? 10_000
  }

  /** Notes one new cut; returns the session's count when it is time to warn. */
  note(sessionId: string): number | undefined {
    const count = (this.#counts.get(sessionId) ?? 0) + 1
    this.#counts.delete(sessionId)
    this.#counts.set(sessionId, count)
    // The least recently cutting session goes first when the map is full.
    if (this.#counts.size > this.#maxSessions) this.#counts.delete(this.#counts.keys().next().value as string)
    if (count < this.#threshold) return undefined
    const steps = count / this.#threshold
    return Number.isInteger(steps) && (steps & (steps - 1)) === 0 ? count : undefined
  }
}

const watches = new WeakMap<object, DropLoopWatch>()

/** One watch per metrics registry (per app), without threading it through every route's deps. */
export function dropLoopWatchFor(owner: object): DropLoopWatch {
  let watch = watches.get(owner)
  if (!watch) watches.set(owner, (watch = new DropLoopWatch()))
  return watch
}
