import type { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { CancelledError, type Cancellation } from './cancellation.ts'
import type { HeaderMap } from './hop-by-hop.ts'

export interface ExchangeRequest {
  readonly origin: string
  readonly path: string
  readonly method: string
  readonly headers: HeaderMap
  readonly body: Buffer | Readable | null
}

export interface UpstreamResponse {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: ResponseBody
}

/** A refused answer larger than this is not worth reading to keep its connection: the socket is closed instead. */
const discardLimitBytes = 128 * 1024

/**
 * One HTTP exchange through undici's handler interface: the answer's chunks come straight from the
 * parser to whoever reads `body`, with no stream, async resource or abort signal in between (the
 * handler API is undici's fastest path). Rejects with undici's error, or CancelledError.
 */
export function exchange(
  dispatcher: Dispatcher,
  request: ExchangeRequest,
  cancellation: Cancellation,
): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const body = new ResponseBody()
    let controller: Dispatcher.DispatchController | undefined
    let started = false
    const stopListening = cancellation.onCancel(() => {
      body.fail(new CancelledError())
      controller?.abort(new CancelledError())
    })
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(requestController) {
        controller = requestController
        body.attach(requestController)
        if (cancellation.cancelled) requestController.abort(new CancelledError())
      },
      onResponseStart(_controller, statusCode, headers) {
        // 1xx interim answers are not the response.
        if (statusCode < 200) return
        started = true
        resolve({ status: statusCode, headers, body })
      },
      onResponseData(_controller, chunk) {
        body.push(chunk)
      },
      onResponseEnd() {
        stopListening()
        body.end()
      },
      onResponseError(_controller, error) {
        stopListening()
        if (started) body.fail(error)
        else reject(cancellation.cancelled ? new CancelledError() : error)
      },
    }
    dispatcher.dispatch(
      {
        origin: request.origin,
        path: request.path,
        method: request.method as Dispatcher.HttpMethod,
        headers: request.headers,
        body: request.body,
      },
      handler,
    )
  })
}

/**
 * Bytes that may wait with no reader before the upstream connection is paused. A small answer
 * (a JSON message, a short stream) arrives whole in one socket read, before the relay asks for its
 * first chunk: pausing on it would stop the parser short of the answer's end, and resuming it cost
 * a second pass through undici on the way to the client (docs/proxy.md, the hot path).
 */
const queuedBeforePause = 64 * 1024

/** How many of the chunks already received `takeQueued` may hand over: their total, and each one's size. */
export interface QueuedLimits {
  readonly totalBytes: number
  /** Each taken chunk is shorter than this; the first that is not stops the taking. */
  readonly chunkBytes: number
}

/** An answer body's chunks, in order; `takeQueued` hands over at once, from the oldest, those already received. */
export interface BodyChunks extends AsyncIterator<Buffer> {
  takeQueued(limits: QueuedLimits): Buffer[]
}

/** How many of `chunks`, from `start`, `takeQueued` may take within `limits`. */
export function countWithin(chunks: readonly Buffer[], start: number, limits: QueuedLimits): number {
  let bytes = 0
  let index = start
  for (; index < chunks.length; index++) {
    const chunk = chunks[index] as Buffer
    if (chunk.length >= limits.chunkBytes || bytes + chunk.length > limits.totalBytes) break
    bytes += chunk.length
  }
  return index - start
}

/**
 * The answer's body as an async iterator of chunks. At most 64 KiB and what one socket read delivers
 * wait here: once more is queued with no reader, the upstream connection is paused until it is
 * all taken, so a slow client slows the upstream rather than filling memory.
 */
export class ResponseBody implements BodyChunks {
  #queue: Buffer[] = []
  #queuedBytes = 0
  #paused = false
  #ended = false
  #error: unknown = undefined
  #failed = false
  #waiting: { resolve: (result: IteratorResult<Buffer>) => void; reject: (error: unknown) => void } | undefined
  #controller: Dispatcher.DispatchController | undefined
  #discarding = false
  #discarded = 0

  attach(controller: Dispatcher.DispatchController): void {
    this.#controller = controller
  }

  push(chunk: Buffer): void {
    // undici re-enters its parser with an empty chunk after a pause; queueing it would pause forever.
    if (chunk.length === 0) return
    if (this.#discarding) {
      this.#discarded += chunk.length
      if (this.#discarded > discardLimitBytes) this.#controller?.abort(new Error('refused answer too large to drain'))
      return
    }
    const waiting = this.#waiting
    if (waiting) {
      this.#waiting = undefined
      waiting.resolve({ value: chunk, done: false })
      return
    }
    this.#queue.push(chunk)
    this.#queuedBytes += chunk.length
    if (this.#queuedBytes > queuedBeforePause && !this.#paused) {
      this.#paused = true
      this.#controller?.pause()
    }
  }

  end(): void {
    this.#ended = true
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.resolve({ value: undefined, done: true })
  }

  fail(error: unknown): void {
    if (this.#ended || this.#failed) return
    this.#failed = true
    this.#error = error
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.reject(error)
  }

  /**
   * The chunks already received, from the oldest, as many as `limits` allow (none when nothing waits
   * or the oldest is too large): an answer that arrived in one socket read is relayed in one write
   * instead of a write per event (docs/proxy.md, the hot path).
   */
  takeQueued(limits: QueuedLimits): Buffer[] {
    const count = countWithin(this.#queue, 0, limits)
    if (count === 0) return []
    const taken = this.#queue.splice(0, count)
    for (const chunk of taken) this.#queuedBytes -= chunk.length
    if (this.#queue.length === 0) this.#resume()
    return taken
  }

  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.#queue.shift()
    if (chunk !== undefined) {
      this.#queuedBytes -= chunk.length
      if (this.#queue.length === 0) this.#resume()
      return Promise.resolve({ value: chunk, done: false })
    }
    if (this.#failed) return Promise.reject(this.#error)
    if (this.#ended) return Promise.resolve({ value: undefined, done: true })
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject }
    })
  }

  /** Reads and drops the rest, so the connection can serve another request (a large rest closes it instead). */
  discard(): void {
    if (this.#ended || this.#failed) return
    this.#discarding = true
    this.#discarded = this.#queuedBytes
    this.#queue = []
    this.#queuedBytes = 0
    if (this.#discarded > discardLimitBytes) this.#controller?.abort(new Error('refused answer too large to drain'))
    else this.#resume()
  }

  #resume(): void {
    if (!this.#paused) return
    this.#paused = false
    this.#controller?.resume()
  }
}
