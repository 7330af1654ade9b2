import type { ServerResponse } from 'node:http'
import type { LiveSnapshot } from './live-history.ts'
import type { LiveUpdate } from './live-recorder.ts'

export interface EventStreamLimits {
  /** Pages open at once; more are refused with 503. */
  readonly maxClients: number
  /** A page that stops reading is cut off once this much waits for it. */
  readonly maxBufferedBytes: number
  /** A comment line keeps idle connections (and proxies in between) open. */
  readonly heartbeatMs: number
}

export const defaultStreamLimits: EventStreamLimits = {
  maxClients: 32,
  maxBufferedBytes: 1024 * 1024,
  heartbeatMs: 15_000,
}

/** The open /ctxgate/events connections: a snapshot when one opens, then every request as it finishes. */
export class LiveEventStreams {
  readonly #clients = new Set<ServerResponse>()
  readonly #limits: EventStreamLimits
  #heartbeat: NodeJS.Timeout | undefined

  constructor(limits: EventStreamLimits = defaultStreamLimits) {
    this.#limits = limits
  }

  get size(): number {
    return this.#clients.size
  }

  hasRoom(): boolean {
    return this.#clients.size < this.#limits.maxClients
  }

  /** Starts the stream on `response` with the current state. */
  open(response: ServerResponse, snapshot: LiveSnapshot): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    })
    response.write(`retry: 2000\nevent: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`)
    this.#clients.add(response)
    response.once('close', () => this.#drop(response))
    this.#heartbeat ??= setInterval(() => this.#send(': keep-alive\n\n'), this.#limits.heartbeatMs).unref()
  }

  broadcast(update: LiveUpdate): void {
    if (this.#clients.size > 0) this.#send(`event: request\ndata: ${JSON.stringify(update)}\n\n`)
  }

  closeAll(): void {
    for (const response of this.#clients) response.end()
    this.#clients.clear()
    this.#stopHeartbeat()
  }

  #send(frame: string): void {
    for (const response of this.#clients) {
      if (response.writableLength > this.#limits.maxBufferedBytes) {
        response.destroy()
        this.#drop(response)
      } else response.write(frame)
    }
  }

  #drop(response: ServerResponse): void {
    this.#clients.delete(response)
    if (this.#clients.size === 0) this.#stopHeartbeat()
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat)
    this.#heartbeat = undefined
  }
}
