import { Counter, type Registry } from 'prom-client'
import type { Config } from '../config/schema.ts'
import { lookupLimits } from '../config/model-limits.ts'
import type { ModelPrices } from '../billing/prices.ts'
import { liveEventFrom, type LiveEvent, type LiveSource } from './live-event.ts'
import { defaultHistoryBounds, LiveHistory, type HistoryBounds, type LiveSnapshot } from './live-history.ts'
import { RedisLiveMirror, type RemoteRequest } from './redis-mirror.ts'
import { countersOf, type Counters, type SessionSummary } from './session-summary.ts'

/** One finished request and its session's totals after it: what the page receives. */
export interface LiveUpdate {
  readonly event: LiveEvent
  readonly summary: SessionSummary
}

/** What the recorder needs from a shared store (Redis), so a replica's page shows every replica's requests. */
export interface LiveMirror {
  record(event: LiveEvent, added: Counters, pastCompactPoint: number): Promise<SessionSummary | undefined>
  snapshot(): Promise<LiveSnapshot | undefined>
  subscribe(onRemote: (remote: RemoteRequest) => void): void
  close(): Promise<void>
}

export interface LiveRecorderOptions {
  readonly windowOf: (model: string) => number | undefined
  readonly bounds?: HistoryBounds
  readonly mirror?: LiveMirror
  readonly now?: () => number
  /** The configured price table (`economy.prices`). */
  readonly prices?: readonly ModelPrices[]
}

/** Keeps the live page's history and tells open pages about each request. Nothing here can fail a request. */
export class LiveRecorder {
  readonly #history: LiveHistory
  readonly #listeners = new Set<(update: LiveUpdate) => void>()
  readonly #options: LiveRecorderOptions
  readonly #now: () => number

  constructor(options: LiveRecorderOptions) {
    this.#options = options
    this.#history = new LiveHistory(options.bounds ?? defaultHistoryBounds, options.prices)
    this.#now = options.now ?? Date.now
    options.mirror?.subscribe((remote) => this.#notify(remote))
  }

  /** The call site's one line: a finished request, and its user-agent for the client's name. */
  recordRequest(source: LiveSource, userAgent: string | undefined): void {
    try {
      const event = liveEventFrom(source, userAgent, this.#options.windowOf, this.#now())
      if (event) this.record(event)
    } catch {
      // The page is a view: a bug here must not reach the request that was just served.
    }
  }

  record(event: LiveEvent): void {
    const wasPast = (this.#history.summaryOf(event.session)?.pastCompactPoint ?? 0) === 1
    const local = this.#history.record(event)
    const mirror = this.#options.mirror
    if (!mirror) return this.#notify({ event, summary: local })
    // Fire and forget: the page gets Redis's totals (every replica's) or, if Redis fails, this replica's.
    void mirror
      .record(event, countersOf(event, wasPast, this.#options.prices), local.pastCompactPoint)
      .then((stored) => this.#notify({ event, summary: stored ?? local }))
      .catch(() => undefined)
  }

  /** Redis's view when there is one and it answers in time, else this replica's memory. */
  async snapshot(): Promise<LiveSnapshot> {
    return (await this.#options.mirror?.snapshot()) ?? this.#history.snapshot()
  }

  onUpdate(listener: (update: LiveUpdate) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  async close(): Promise<void> {
    this.#listeners.clear()
    await this.#options.mirror?.close()
  }

  #notify(update: LiveUpdate): void {
    for (const listener of this.#listeners) listener(update)
  }
}

/** The live page's Redis calls never take longer than this; requests never wait for them at all. */
const redisTimeoutMs = 500

/** A recorder for this configuration: memory only, or mirrored to Redis when sessions are shared. */
export function createLiveRecorder(config: Readonly<Config>, registry: Registry): LiveRecorder {
  const storeErrors = new Counter({
    name: 'ctxgate_live_store_errors_total',
    help: 'Live page writes and reads to Redis that failed or timed out (the page falls back to this replica).',
    labelNames: ['operation'],
    registers: [registry],
  })
  const url = config.sessions.redisUrl
  const mirror =
    url === null
      ? undefined
      : new RedisLiveMirror({
          url,
          keyPrefix: config.sessions.redisKeyPrefix,
          ttlMs: config.sessions.idleTtlMs,
          bounds: defaultHistoryBounds,
          timeoutMs: redisTimeoutMs,
          onError: (operation) => storeErrors.inc({ operation }),
        })
  return new LiveRecorder({
    windowOf: (model) => lookupLimits(config, model)?.window,
    prices: config.economy.prices,
    ...(mirror ? { mirror } : {}),
  })
}
