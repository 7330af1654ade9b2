import { CircuitBreaker, type CircuitBreakerOptions, type CircuitState } from './circuit-breaker.ts'

/** What a timed call came to: its answer, or none (timed out, failed, or skipped while the circuit is open). */
export type Attempt<T> = { readonly answered: true; readonly value: T } | { readonly answered: false }

const timedOut = Symbol('timed out')

/**
 * Calls to a network store, each within its time share and behind a circuit breaker; a failure or
 * timeout is reported and answered with `answered: false`, never thrown.
 *
 * The deadline is a timer on ctxgate's own event loop, which a burst of CPU work (planning other
 * requests) can hold up far past it. By the time such a timer runs, the store's reply may be sitting
 * unread in the socket: the deadline then waits for the next poll phase (setImmediate runs after it),
 * where that reply is read first. So a timeout means the reply had not arrived, not that the loop was busy.
 */
export class TimedCalls {
  readonly #breaker: CircuitBreaker
  readonly #timeoutMs: number
  readonly #onError: (operation: string, error: Error) => void

  constructor(timeoutMs: number, breaker: CircuitBreakerOptions, onError: (operation: string, error: Error) => void) {
    this.#timeoutMs = timeoutMs
    this.#breaker = new CircuitBreaker(breaker)
    this.#onError = onError
  }

  get timeoutMs(): number {
    return this.#timeoutMs
  }

  state(): CircuitState {
    return this.#breaker.state()
  }

  async attempt<T>(operation: string, call: () => Promise<T>): Promise<Attempt<T>> {
    if (!this.#breaker.tryAcquire()) return { answered: false }
    const deadline = loopFairDeadline(this.#timeoutMs)
    const pending = call()
    // A late answer or error after the deadline is dropped here, never left unhandled.
    pending.catch(() => undefined)
    try {
      const result = await Promise.race([pending, deadline.promise])
      if (result !== timedOut) {
        this.#breaker.succeeded()
        return { answered: true, value: result }
      }
      // Only waiting costs a request time: a refused connection fails at once and does not trip the breaker.
      this.#breaker.failed()
      this.#onError(operation, new Error(`no answer within ${this.#timeoutMs} ms`))
      return { answered: false }
    } catch (error) {
      this.#breaker.failedFast()
      this.#onError(operation, error as Error)
      return { answered: false }
    } finally {
      deadline.cancel()
    }
  }
}

/** Resolves `timedOut` once `ms` have passed and the loop has since read what arrived on its sockets. */
function loopFairDeadline(ms: number): { promise: Promise<typeof timedOut>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined
  let immediate: NodeJS.Immediate | undefined
  const promise = new Promise<typeof timedOut>((resolve) => {
    timer = setTimeout(() => {
      immediate = setImmediate(() => resolve(timedOut))
    }, ms)
  })
  return {
    promise,
    cancel: () => {
      clearTimeout(timer)
      if (immediate) clearImmediate(immediate)
    },
  }
}
