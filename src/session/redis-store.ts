import { Redis } from 'ioredis'
import type { CalibrationSync, ConversationMemory } from '../rewrite/calibration.ts'
import { CircuitBreaker, type CircuitState } from './circuit-breaker.ts'
import {
  maxModelsPerSession,
  sessionCounterFields,
  turnIncrements,
  type SessionTotals,
  type SessionTotalsStore,
  type TurnRecord,
  withDollars,
  armAndKind,
} from './accounting.ts'
import { finishedLengthsOf } from './finished-sessions.ts'
import { RedisFinishedSessions } from './redis-finished.ts'
import type { ConversationState, SessionStore } from './session-store.ts'
import { keepNewestDecisions } from './state-size.ts'

export interface RedisStoreOptions {
  readonly url: string
  readonly keyPrefix: string
  /** Conversations and sessions idle this long expire. */
  readonly idleTtlMs: number
  /** Sessions listed on /ctxgate/sessions (the index is trimmed to this many). */
  readonly maxSessions: number
  /** Largest stored state of one conversation; older frozen decisions go first past it. */
  readonly maxStateBytes: number
  /** Most time the store may add to one request, split over its round trips on the request path. */
  readonly budgetMs: number
  /** Consecutive timeouts that make ctxgate skip Redis for `breakerCooldownMs`. */
  readonly breakerThreshold: number
  readonly breakerCooldownMs: number
  /** Called on every failed operation (ctxgate keeps serving without the store). */
  readonly onError: (operation: string, error: Error) => void
  readonly now?: () => number
}

const timedOut = Symbol('timed out')

/**
 * A request reads calibration and state, writes state, then writes calibration: at most four round
 * trips one after another (the finished lengths of its kind are read alongside the state).
 */
export const roundTripsPerRequest = 4

const counterFields = sessionCounterFields

/**
 * Conversation state, calibration and session totals in Redis, so several replicas behind a load
 * balancer make the same frozen decisions. Every call fails fast when Redis is away (no offline
 * queue) and the caller goes on without it. A Redis that answers slowly or not at all (paused, not
 * dead) costs a request at most `budgetMs`, and after a few timeouts none at all: the circuit
 * breaker skips it for a cool-down, then lets one request probe it.
 */
export class RedisSessionStore implements SessionStore {
  readonly kind = 'redis'
  readonly #redis: Redis
  readonly #options: RedisStoreOptions
  readonly #breaker: CircuitBreaker
  readonly #timeoutMs: number
  readonly #finished: RedisFinishedSessions
  #knownSize = 0
  /** Calibration learned by any replica, shared. */
  readonly calibration: CalibrationSync = {
    load: (ratioKey, family, scope, conversation) => this.#loadCalibration(ratioKey, family, scope, conversation),
    pushRatio: (family, ratio, keep, conversation) => this.#pushRatio(family, ratio, keep, conversation),
    pushLimit: (family, scope, limit, ttlMs) => this.#pushLimit(family, scope, limit, ttlMs),
    clearLimit: async (family, scope) => {
      await this.#run('calibration-limit', () => this.#redis.del(`limit:${family}:${scope}`))
    },
  }
  /** Per-session totals, shared. */
  readonly totals: SessionTotalsStore = {
    record: (sessionId, turn) => this.#record(sessionId, turn),
    get: (sessionId) => this.#totals(sessionId),
    list: (limit) => this.#list(limit),
    count: () => this.#count(),
  }

  constructor(options: RedisStoreOptions) {
    this.#options = options
    this.#timeoutMs = Math.max(1, Math.floor(options.budgetMs / roundTripsPerRequest))
    this.#breaker = new CircuitBreaker({
      threshold: options.breakerThreshold,
      cooldownMs: options.breakerCooldownMs,
      ...(options.now ? { now: options.now } : {}),
    })
    this.#redis = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      // ctxgate stops waiting after its own budget; this only clears commands a paused Redis never answers.
      commandTimeout: 1_000,
      // Keep trying to come back, never faster than every 2 s.
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      keyPrefix: options.keyPrefix,
    })
    this.#redis.on('error', (error: Error) => options.onError('connection', error))
    this.#finished = new RedisFinishedSessions(this.#redis, options.idleTtlMs, options.now ?? Date.now)
  }

  /** Reachable: connected, and answering in time (the circuit is closed). */
  healthy(): boolean {
    return this.#redis.status === 'ready' && this.#breaker.state() === 'closed'
  }

  circuitState(): CircuitState {
    return this.#breaker.state()
  }

  size(): number {
    return this.#knownSize
  }

  async get(key: string): Promise<ConversationState | undefined> {
    const raw = await this.#run('get', () => this.#redis.get(`conv:${key}`))
    if (!raw) return undefined
    try {
      return JSON.parse(raw) as ConversationState
    } catch {
      return undefined
    }
  }

  async set(key: string, state: ConversationState, before?: ConversationState): Promise<void> {
    const json = this.#bounded(state)
    const { kind, lastSeen, requests } = state
    const kindBefore = before?.kind !== undefined && before.kind !== kind ? { kindBefore: before.kind } : {}
    await this.#run('set', () =>
      kind === undefined
        ? this.#redis.set(`conv:${key}`, json, 'PX', this.#options.idleTtlMs)
        : this.#finished.write({ conversationKey: key, json, kind, lastSeen, requests, ...kindBefore }),
    )
  }

  /** Finished lengths of the kind, counting first those that have gone idle since anyone last looked. */
  async finishedLengths(kind: string): Promise<readonly number[]> {
    return finishedLengthsOf(await this.#run('finished-read', () => this.#finished.read(kind)))
  }

  async #loadCalibration(
    ratioKey: string,
    family: string,
    scope: string,
    conversation: string | undefined,
  ): Promise<{ ratios: readonly number[]; limit?: number; conversation?: ConversationMemory } | undefined> {
    const result = await this.#run('calibration-load', () => {
      const multi = this.#redis.multi().lrange(`cal:${ratioKey}`, 0, -1).get(`limit:${family}:${scope}`)
      return (conversation === undefined ? multi : multi.get(`calconv:${conversation}`)).exec()
    })
    if (!result) return undefined
    const ratios = ((result[0]?.[1] as string[] | undefined) ?? []).map(Number).filter(Number.isFinite).toReversed()
    const limit = Number(result[1]?.[1])
    const taught = parsedJson(result[2]?.[1]) as ConversationMemory | undefined
    return {
      ratios,
      ...(Number.isFinite(limit) && limit > 0 ? { limit } : {}),
      ...(taught === undefined ? {} : { conversation: taught }),
    }
  }

  /** A conversation's memory lives beside its state, one small key per conversation, and idles out like it. */
  async #pushRatio(
    family: string,
    ratio: number,
    keep: number,
    conversation: { readonly key: string; readonly memory: ConversationMemory } | undefined,
  ): Promise<void> {
    await this.#run('calibration-push', () => {
      const multi = this.#redis
        .multi()
        .lpush(`cal:${family}`, String(ratio))
        .ltrim(`cal:${family}`, 0, keep - 1)
        .pexpire(`cal:${family}`, this.#options.idleTtlMs)
      if (conversation !== undefined)
        multi.set(`calconv:${conversation.key}`, JSON.stringify(conversation.memory), 'PX', this.#options.idleTtlMs)
      return multi.exec()
    })
  }

  /** Learned limits expire, so a wrong one cannot outlive its TTL even if nothing corrects it. */
  async #pushLimit(family: string, scope: string, limit: number, ttlMs: number): Promise<void> {
    const expiry = ttlMs > 0 ? ttlMs : this.#options.idleTtlMs
    await this.#run('calibration-limit', () => this.#redis.set(`limit:${family}:${scope}`, String(limit), 'PX', expiry))
  }

  async #record(sessionId: string, turn: TurnRecord): Promise<void> {
    const increments = turnIncrements(turn)
    const now = Date.now()
    const key = `session:${sessionId}`
    const multi = this.#redis.multi()
    for (const field of counterFields) if (increments[field] !== 0) multi.hincrby(key, field, increments[field])
    multi.hsetnx(key, 'firstSeen', new Date(now).toISOString()).hset(key, 'lastSeen', new Date(now).toISOString())
    if (turn.arm !== undefined) multi.hsetnx(key, 'arm', turn.arm)
    if (turn.kind !== undefined) multi.hsetnx(key, 'kind', turn.kind)
    multi
      .sadd(`session-models:${sessionId}`, turn.model)
      .pexpire(`session-models:${sessionId}`, this.#options.idleTtlMs)
    multi
      .pexpire(key, this.#options.idleTtlMs)
      .zadd('sessions', now, sessionId)
      .zremrangebyrank('sessions', 0, -this.#options.maxSessions - 1)
    await this.#run('session-record', () => multi.exec())
  }

  async #totals(sessionId: string): Promise<SessionTotals | undefined> {
    const result = await this.#run('session-get', () =>
      this.#redis.multi().hgetall(`session:${sessionId}`).smembers(`session-models:${sessionId}`).exec(),
    )
    const fields = result?.[0]?.[1] as Record<string, string> | undefined
    if (!fields || Object.keys(fields).length === 0) return undefined
    const models = ((result?.[1]?.[1] as string[] | undefined) ?? []).slice(0, maxModelsPerSession)
    const totals = Object.fromEntries(counterFields.map((field) => [field, Number(fields[field] ?? 0)])) as Record<
      (typeof counterFields)[number],
      number
    >
    return {
      sessionId,
      // Whole millionths in Redis (HINCRBY is exact); dollars for readers.
      ...withDollars(totals),
      models,
      firstSeen: fields['firstSeen'] ?? '',
      lastSeen: fields['lastSeen'] ?? '',
      ...armAndKind({
        ...(fields['arm'] === 'control' || fields['arm'] === 'treated' ? { arm: fields['arm'] } : {}),
        ...(fields['kind'] === undefined ? {} : { kind: fields['kind'] }),
      }),
    }
  }

  async #list(limit: number): Promise<SessionTotals[]> {
    const ids = (await this.#run('session-list', () => this.#redis.zrevrange('sessions', 0, limit - 1))) ?? []
    const totals = await Promise.all(ids.map((id) => this.#totals(id)))
    return totals.filter((entry): entry is SessionTotals => entry !== undefined)
  }

  async #count(): Promise<number> {
    const count = (await this.#run('session-count', () => this.#redis.zcard('sessions'))) ?? 0
    this.#knownSize = count
    return count
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect())
  }

  /**
   * Runs one round trip within its share of the request's budget; a failure or timeout is reported
   * and answered with undefined, never thrown. With the circuit open nothing is sent at all.
   */
  async #run<T>(operation: string, call: () => Promise<T>): Promise<T | undefined> {
    if (!this.#breaker.tryAcquire()) return undefined
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<typeof timedOut>((resolve) => {
      timer = setTimeout(() => resolve(timedOut), this.#timeoutMs)
    })
    const pending = call()
    // A late answer or error after the deadline is dropped here, never left unhandled.
    pending.catch(() => undefined)
    try {
      const result = await Promise.race([pending, deadline])
      if (result !== timedOut) {
        this.#breaker.succeeded()
        return result
      }
      // Only waiting costs a request time: a refused connection fails at once and does not trip the breaker.
      this.#breaker.failed()
      this.#options.onError(operation, new Error(`no answer within ${this.#timeoutMs} ms`))
      return undefined
    } catch (error) {
      this.#breaker.failedFast()
      this.#options.onError(operation, error as Error)
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }

  /** Keeps one conversation's state under its size cap by forgetting its oldest frozen decisions. */
  #bounded(state: ConversationState): string {
    let json = JSON.stringify(state)
    if (json.length <= this.#options.maxStateBytes) return json
    let keep = Object.keys(state.decisions.results).length
    while (json.length > this.#options.maxStateBytes && keep > 0) {
      keep = Math.floor(keep / 2)
      json = JSON.stringify(keepNewestDecisions(state, keep))
    }
    this.#options.onError(
      'state-trimmed',
      new Error(`conversation state over ${this.#options.maxStateBytes} bytes; kept the newest ${keep} decisions`),
    )
    return json
  }
}

/** A stored JSON value, or undefined when it is missing or does not parse (the caller validates its shape). */
function parsedJson(raw: unknown): unknown {
  if (typeof raw !== 'string') return undefined
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return undefined
  }
}
