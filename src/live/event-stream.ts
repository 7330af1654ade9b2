import type { ServerResponse } from 'node:http'
import type { LiveUpdate } from './live-recorder.ts'

export interface EventStreamLimits {
  /** Streams open at once, counting those still waiting for their snapshot; more are refused. */
  readonly maxStreams: number
  /** Bytes written to every stream together and not yet taken by its reader (`live.maxBufferedBytes`). */
  readonly maxBufferedBytes: number
  /** One stream is cut once this much more than its snapshot waits for it. */
  readonly maxBufferedBytesPerStream: number
  /** A comment line keeps idle connections (and proxies in between) open. */
  readonly heartbeatMs: number
  /** A stream that delivered nothing but heartbeats for this long is ended; EventSource reconnects. */
  readonly idleTimeoutMs: number
}

export const defaultStreamLimits: EventStreamLimits = {
  maxStreams: 32,
  maxBufferedBytes: 64 * 1024 * 1024,
  maxBufferedBytesPerStream: 1024 * 1024,
  heartbeatMs: 15_000,
  idleTimeoutMs: 300_000,
}

export type RefusalReason = 'full' | 'memory'
export type CutReason = 'idle' | 'slow' | 'memory'

/** What the streams tell the metrics: refusals and cuts as they happen. */
export interface StreamEvents {
  refused?(reason: RefusalReason): void
  cut?(reason: CutReason): void
}

/** A slot taken before the snapshot is read, so concurrent opens can never pass the cap together. */
export interface StreamSlot {
  /** Whether a snapshot frame of this size fits the memory budget now. */
  fits(frameBytes: number): boolean
  /** Starts the stream with its snapshot frame; the slot becomes the stream. */
  open(response: ServerResponse, snapshotFrame: Buffer): void
  /** Gives the slot back (the snapshot failed, or the client left while it was read). */
  release(): void
}

interface OpenStream {
  /** What may wait for this stream before it is cut: its snapshot plus the per-stream allowance. */
  readonly allowance: number
  /** When a snapshot or an update last reached the socket (heartbeats do not count). */
  lastProgressAt: number
}

/** The open /ctxgate/events connections: a snapshot when one opens, then every request as it finishes. */
export class LiveEventStreams {
  readonly #streams = new Map<ServerResponse, OpenStream>()
  readonly #limits: EventStreamLimits
  readonly #events: StreamEvents
  readonly #now: () => number
  #reserved = 0
  #ticker: NodeJS.Timeout | undefined
  #lastHeartbeatAt = 0

  constructor(limits: EventStreamLimits = defaultStreamLimits, events: StreamEvents = {}, now = Date.now) {
    this.#limits = limits
    this.#events = events
    this.#now = now
  }

  /** Open streams, not counting reserved slots. */
  get size(): number {
    return this.#streams.size
  }

  /** Bytes written to the streams and not yet taken by their readers (an upper bound: shared frames count once per stream). */
  bufferedBytes(): number {
    let total = 0
    for (const response of this.#streams.keys()) total += response.writableLength
    return total
  }

  /** Takes a slot synchronously; undefined (and counted) when every slot is taken. */
  reserve(): StreamSlot | undefined {
    if (this.#streams.size + this.#reserved >= this.#limits.maxStreams) {
      this.#events.refused?.('full')
      return undefined
    }
    this.#reserved++
    let held = true
    const release = (): void => {
      if (held) this.#reserved--
      held = false
    }
    return {
      fits: (frameBytes) => {
        const fits = this.bufferedBytes() + frameBytes <= this.#limits.maxBufferedBytes
        if (!fits) this.#events.refused?.('memory')
        return fits
      },
      open: (response, frame) => {
        release()
        this.#open(response, frame)
      },
      release,
    }
  }

  #open(response: ServerResponse, snapshotFrame: Buffer): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    })
    const stream: OpenStream = {
      allowance: snapshotFrame.length + this.#limits.maxBufferedBytesPerStream,
      lastProgressAt: this.#now(),
    }
    this.#streams.set(response, stream)
    response.once('close', () => this.#drop(response))
    this.#write(response, stream, snapshotFrame)
    this.#ticker ??= setInterval(() => this.#tick(), this.#tickMs()).unref()
  }

  broadcast(update: LiveUpdate): void {
    if (this.#streams.size === 0) return
    // One buffer for every stream: each socket queues a reference, not a copy.
    const frame = Buffer.from(`event: request\ndata: ${JSON.stringify(update)}\n\n`)
    for (const [response, stream] of this.#streams) {
      if (response.writableLength + frame.length > stream.allowance) this.#cut(response, 'slow')
      else this.#write(response, stream, frame)
    }
    this.#holdBudget()
  }

  closeAll(): void {
    for (const response of this.#streams.keys()) response.end()
    this.#streams.clear()
    this.#stopTicker()
  }

  #write(response: ServerResponse, stream: OpenStream, frame: Buffer): void {
    response.write(frame, (error) => {
      if (!error) stream.lastProgressAt = this.#now()
    })
  }

  /** Over the global budget, the streams holding the most go first. */
  #holdBudget(): void {
    let total = this.bufferedBytes()
    if (total <= this.#limits.maxBufferedBytes) return
    const largestFirst = [...this.#streams.keys()].toSorted((a, b) => b.writableLength - a.writableLength)
    for (const response of largestFirst) {
      if (total <= this.#limits.maxBufferedBytes) return
      total -= response.writableLength
      this.#cut(response, 'memory')
    }
  }

  #tick(): void {
    const now = this.#now()
    for (const [response, stream] of this.#streams)
      if (now - stream.lastProgressAt >= this.#limits.idleTimeoutMs) this.#cut(response, 'idle')
    if (now - this.#lastHeartbeatAt < this.#limits.heartbeatMs) return
    this.#lastHeartbeatAt = now
    for (const [response, stream] of this.#streams) {
      if (response.writableLength > stream.allowance) this.#cut(response, 'slow')
      else response.write(': keep-alive\n\n')
    }
  }

  /** Idle streams end cleanly (what was sent arrives, then EventSource reconnects); slow ones are destroyed. */
  #cut(response: ServerResponse, reason: CutReason): void {
    this.#events.cut?.(reason)
    if (reason === 'idle' && response.writableLength === 0) response.end()
    else response.destroy()
    this.#drop(response)
  }

  #tickMs(): number {
    return Math.max(10, Math.min(this.#limits.heartbeatMs, Math.floor(this.#limits.idleTimeoutMs / 4)))
  }

  #drop(response: ServerResponse): void {
    this.#streams.delete(response)
    if (this.#streams.size === 0) this.#stopTicker()
  }

  #stopTicker(): void {
    clearInterval(this.#ticker)
    this.#ticker = undefined
  }
}
