/**
 * "The client has gone: stop the upstream call." A plain flag with callbacks: an AbortController
 * and its EventTarget cost about 5 µs per request on Node 20, on a path that rarely aborts.
 */
export class Cancellation {
  #cancelled = false
  #listeners: (() => void)[] = []

  get cancelled(): boolean {
    return this.#cancelled
  }

  cancel(): void {
    if (this.#cancelled) return
    this.#cancelled = true
    const listeners = this.#listeners
    this.#listeners = []
    for (const listener of listeners) listener()
  }

  /** Runs `listener` on cancel (at once if already cancelled); returns a function that unregisters it. */
  onCancel(listener: () => void): () => void {
    if (this.#cancelled) {
      listener()
      return noop
    }
    this.#listeners.push(listener)
    return () => {
      const index = this.#listeners.indexOf(listener)
      if (index !== -1) this.#listeners.splice(index, 1)
    }
  }
}

const noop = (): void => undefined

/** Thrown where a call stops because it was cancelled. */
export class CancelledError extends Error {
  constructor() {
    super('cancelled: the client went away')
    this.name = 'CancelledError'
  }
}

/** Waits `ms`, or rejects with CancelledError as soon as the cancellation fires. */
export function cancellableDelay(ms: number, cancellation: Cancellation): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop()
      resolve()
    }, ms)
    const stop = cancellation.onCancel(() => {
      clearTimeout(timer)
      reject(new CancelledError())
    })
  })
}
