export type CircuitState = 'closed' | 'open' | 'half-open'

export interface CircuitBreakerOptions {
  /** Consecutive failures (errors or timeouts) that open the circuit. */
  readonly threshold: number
  /** How long an open circuit refuses calls before it lets one probe through. */
  readonly cooldownMs: number
  readonly now?: () => number
}

/**
 * Keeps a failing dependency off the request path: after `threshold` failures in a row every call
 * is refused for `cooldownMs`; then one call probes it, and its success closes the circuit again.
 */
export class CircuitBreaker {
  readonly #options: CircuitBreakerOptions
  readonly #now: () => number
  #failures = 0
  #openedAt: number | undefined
  #probing = false

  constructor(options: CircuitBreakerOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  state(): CircuitState {
    if (this.#openedAt === undefined) return 'closed'
    return this.#now() - this.#openedAt >= this.#options.cooldownMs ? 'half-open' : 'open'
  }

  /** Whether a call may go out now; once the cool-down is over, only one at a time (the probe). */
  tryAcquire(): boolean {
    const state = this.state()
    if (state === 'closed') return true
    if (state === 'open' || this.#probing) return false
    this.#probing = true
    return true
  }

  succeeded(): void {
    this.#failures = 0
    this.#openedAt = undefined
    this.#probing = false
  }

  /**
   * A call that failed at once (a refused connection): it never counts toward opening a closed
   * circuit, but a probe that fails so re-opens it, so the probe slot is never left taken.
   */
  failedFast(): void {
    if (this.#probing) this.failed()
  }

  failed(): void {
    this.#probing = false
    this.#failures += 1
    // A failed probe re-opens at once; a closed circuit opens at the threshold.
    if (this.#openedAt !== undefined || this.#failures >= this.#options.threshold) this.#openedAt = this.#now()
  }
}
