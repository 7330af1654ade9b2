import type { ServerResponse } from 'node:http'
import type { RelayOutcome, RelayResult } from './relay-result.ts'

/** Writes to the client with its backpressure, counting bytes, and notices when it goes away. */
export class ClientWriter {
  readonly response: ServerResponse
  #bytes = 0
  #firstWriteAt: number | undefined
  #clientGone = false
  #cutShort = false
  readonly #onClose: () => void

  constructor(response: ServerResponse, abortUpstream: () => void) {
    this.response = response
    this.#onClose = () => {
      if (response.writableFinished) return
      this.#clientGone = true
      abortUpstream()
    }
    response.once('close', this.#onClose)
    // The client may have left while the answer was being read (a held preamble, a 400 read for a refit).
    if (response.destroyed && !response.writableFinished) this.#onClose()
  }

  get clientGone(): boolean {
    return this.#clientGone
  }

  /**
   * Writes a chunk; a promise only when the client's buffer is full (wait for it before the next). Nothing
   * to wait for returns nothing: on the usual answer, no turn of the microtask queue between the chunk
   * and the end that sends it (Node sends a response's writes when it is ended or on the next tick).
   */
  send(chunk: Buffer): Promise<void> | undefined {
    if (chunk.length === 0 || this.#clientGone) return undefined
    if (this.response.destroyed) {
      this.#onClose()
      return undefined
    }
    this.#firstWriteAt ??= performance.now()
    this.#bytes += chunk.length
    return this.response.write(chunk) ? undefined : drained(this.response)
  }

  /** Ends the answer with a last frame, and nothing more goes out (the shutdown grace is over). */
  cut(lastFrame: string): void {
    if (this.#clientGone || this.response.writableEnded || this.response.destroyed) return
    this.#clientGone = true
    this.#cutShort = true
    this.response.end(lastFrame)
  }

  /** Whether `cut` ended the answer. */
  get wasCut(): boolean {
    return this.#cutShort
  }

  /** Stops watching for the client leaving (the relay is ending). */
  release(): void {
    this.response.off('close', this.#onClose)
  }

  result(outcome: RelayOutcome, sse: boolean, events: number): RelayResult {
    return {
      outcome,
      bytes: this.#bytes,
      sse,
      events,
      errorEventSent: false,
      ...(outcome === 'complete' && this.#firstWriteAt !== undefined ? { firstWriteAt: this.#firstWriteAt } : {}),
    }
  }
}

function drained(response: ServerResponse): Promise<void> {
  // A destroyed response never drains: waiting on it would hang the request forever.
  if (response.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done)
      response.off('close', done)
      resolve()
    }
    response.on('drain', done)
    response.on('close', done)
  })
}
