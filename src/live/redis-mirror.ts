import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import type { LiveEvent } from './live-event.ts'
import type { HistoryBounds, LiveSnapshot, SessionView } from './live-history.ts'
import { counterFields, type Counters, type SessionSummary } from './session-summary.ts'

export interface RedisMirrorOptions {
  readonly url: string
  /** The sessions key prefix; the live page's keys go under `<prefix>live:`. */
  readonly keyPrefix: string
  /** Every live key expires this long after its session's last request. */
  readonly ttlMs: number
  readonly bounds: HistoryBounds
  /** No Redis call of the live page may take longer than this. */
  readonly timeoutMs: number
  /** Counted and otherwise ignored: the page falls back to this replica's memory. */
  readonly onError: (operation: string) => void
}

/** A live event as another replica published it, with its session's totals as Redis holds them. */
export interface RemoteRequest {
  readonly event: LiveEvent
  readonly summary: SessionSummary
}

/** A stored event is a few hundred bytes; anything far larger is not ours and is not stored. */
export const maxEventBytes = 4_096

/**
 * The live page's history in Redis, so every replica's page shows what any replica served: a sorted
 * set of sessions, one hash of totals and one capped list of requests per session, all with TTLs, and
 * a channel that carries each request to the other replicas as it happens.
 */
export class RedisLiveMirror {
  readonly #redis: Redis
  readonly #options: RedisMirrorOptions
  readonly #channel: string
  readonly #origin = randomUUID()
  #subscriber: Redis | undefined

  constructor(options: RedisMirrorOptions) {
    this.#options = options
    this.#channel = `${options.keyPrefix}live:events`
    this.#redis = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      commandTimeout: options.timeoutMs,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      keyPrefix: `${options.keyPrefix}live:`,
    })
    this.#redis.on('error', () => options.onError('connection'))
  }

  /** Stores one request and tells the other replicas; resolves with the stored totals, undefined on failure. */
  async record(event: LiveEvent, added: Counters, pastCompactPoint: number): Promise<SessionSummary | undefined> {
    const json = JSON.stringify(event)
    if (Buffer.byteLength(json) > maxEventBytes) {
      this.#options.onError('oversize')
      return undefined
    }
    const summary = await this.#run('record', () => this.#write(event, json, added, pastCompactPoint))
    if (!summary) return undefined
    void this.#run('trim', () => this.#trimSessions())
    void this.#run('publish', () =>
      this.#redis.publish(this.#channel, JSON.stringify({ origin: this.#origin, event, summary })),
    )
    return summary
  }

  async #write(event: LiveEvent, json: string, added: Counters, past: number): Promise<SessionSummary | undefined> {
    const { ttlMs, bounds } = this.#options
    const sum = `sum:${event.session}`
    const requests = `req:${event.session}`
    const multi = this.#redis.multi()
    for (const field of counterFields) if (added[field] !== 0) multi.hincrbyfloat(sum, field, added[field])
    multi
      .hset(sum, { client: event.client, model: event.model, lastSeen: event.at, pastCompactPoint: past })
      .hsetnx(sum, 'firstSeen', String(event.at))
      .pexpire(sum, ttlMs)
      .lpush(requests, json)
      .ltrim(requests, 0, bounds.maxRequestsPerSession - 1)
      .pexpire(requests, ttlMs)
      .zadd('sessions', event.at, event.session)
      .pexpire('sessions', ttlMs)
      .hgetall(sum)
    const results = await multi.exec()
    const fields = results?.at(-1)?.[1] as Record<string, string> | undefined
    return fields ? summaryFrom(event.session, fields) : undefined
  }

  /** Keeps the newest sessions only, deleting the keys of the ones that fall out. */
  async #trimSessions(): Promise<void> {
    const excess = (await this.#redis.zcard('sessions')) - this.#options.bounds.maxSessions
    if (excess <= 0) return
    const oldest = await this.#redis.zrange('sessions', '0', String(excess - 1))
    if (oldest.length === 0) return
    await this.#redis
      .multi()
      .del(...oldest.flatMap((session) => [`sum:${session}`, `req:${session}`]))
      .zrem('sessions', ...oldest)
      .exec()
  }

  /** The newest sessions as Redis holds them; undefined when Redis does not answer in time. */
  async snapshot(): Promise<LiveSnapshot | undefined> {
    return this.#run('snapshot', async () => {
      const sessions = await this.#redis.zrevrange('sessions', 0, this.#options.bounds.maxSessions - 1)
      const multi = this.#redis.multi()
      for (const session of sessions)
        multi.hgetall(`sum:${session}`).lrange(`req:${session}`, 0, this.#options.bounds.maxRequestsPerSession - 1)
      const results = (await multi.exec()) ?? []
      const views: SessionView[] = []
      sessions.forEach((session, index) => {
        const fields = results[index * 2]?.[1] as Record<string, string> | undefined
        const list = (results[index * 2 + 1]?.[1] as string[] | undefined) ?? []
        if (!fields || Object.keys(fields).length === 0) return
        const requests = list.map(parseEvent).filter((event): event is LiveEvent => event !== undefined)
        views.push({ summary: summaryFrom(session, fields), requests: requests.toReversed() })
      })
      return { sessions: views }
    })
  }

  /** Calls `onRemote` for every request another replica records. */
  subscribe(onRemote: (remote: RemoteRequest) => void): void {
    const subscriber = this.#redis.duplicate({ keyPrefix: '', enableOfflineQueue: true, commandTimeout: undefined })
    this.#subscriber = subscriber
    subscriber.on('error', () => this.#options.onError('subscribe'))
    subscriber.on('message', (_channel: string, message: string) => {
      const remote = parseRemote(message, this.#origin)
      if (remote) onRemote(remote)
    })
    subscriber.subscribe(this.#channel).catch(() => this.#options.onError('subscribe'))
  }

  async close(): Promise<void> {
    await Promise.all([this.#redis, this.#subscriber].map((client) => client?.quit().catch(() => client.disconnect())))
  }

  /** One operation with a deadline; a failure or a late answer is counted and answered with undefined. */
  async #run<T>(operation: string, call: () => Promise<T>): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.#options.timeoutMs)
      timer.unref()
    })
    try {
      const result = await Promise.race([call(), deadline])
      if (result !== 'timeout') return result
      this.#options.onError(operation)
      return undefined
    } catch {
      this.#options.onError(operation)
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }
}

function summaryFrom(session: string, fields: Record<string, string>): SessionSummary {
  const numberOf = (name: string): number => {
    const value = Number(fields[name] ?? 0)
    return Number.isFinite(value) ? value : 0
  }
  const counters = Object.fromEntries(counterFields.map((field) => [field, numberOf(field)])) as Counters
  return {
    ...counters,
    session,
    client: fields['client'] ?? 'unknown',
    model: fields['model'] ?? 'unknown',
    firstSeen: numberOf('firstSeen'),
    lastSeen: numberOf('lastSeen'),
    pastCompactPoint: numberOf('pastCompactPoint') === 1 ? 1 : 0,
  }
}

function parseEvent(json: string): LiveEvent | undefined {
  try {
    const value = JSON.parse(json) as Partial<LiveEvent> | null
    return isLiveEvent(value) ? value : undefined
  } catch {
    return undefined
  }
}

function isLiveEvent(value: Partial<LiveEvent> | null): value is LiveEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof value.session === 'string' &&
    typeof value.at === 'number' &&
    typeof value.status === 'number' &&
    typeof value.model === 'string'
  )
}

function parseRemote(message: string, ownOrigin: string): RemoteRequest | undefined {
  try {
    const parsed = JSON.parse(message) as { origin?: unknown; event?: Partial<LiveEvent>; summary?: SessionSummary }
    if (parsed.origin === ownOrigin || !isLiveEvent(parsed.event ?? null) || typeof parsed.summary !== 'object')
      return undefined
    return { event: parsed.event as LiveEvent, summary: parsed.summary }
  } catch {
    return undefined
  }
}
