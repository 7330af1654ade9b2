import { Redis } from 'ioredis'
import type { CalibrationSync, ConversationLesson } from '../calibration/calibration.ts'
import type { CircuitState } from './circuit-breaker.ts'
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
import { finishedKindsKept, finishedLengthsOf } from './finished-sessions.ts'
import { MemorySessionStore } from './memory-store.ts'
import { newerState } from './newer-state.ts'
import { RedisFinishedSessions } from './redis-finished.ts'
import type { ConversationState, SessionStore } from './session-store.ts'
import { keepNewestDecisions } from './state-size.ts'
import { TimedCalls, type Attempt } from './timed-calls.ts'

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
  /** This replica's own copy of the conversations it served (write-through), used when Redis does not answer in time. */
  readonly localCopies?: { readonly maxEntries: number; readonly maxTotalBytes: number }
  readonly now?: () => number
}

/** Local copies kept when the caller names no bound (tests that build a store directly). */
const defaultLocalCopies = { maxEntries: 10_000, maxTotalBytes: 64 * 1024 * 1024 }

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
  readonly #calls: TimedCalls
  readonly #finished: RedisFinishedSessions
  /** What this replica last wrote or read per conversation, so a slow Redis never costs a conversation its frozen decisions. */
  readonly #local: MemorySessionStore
  /** The finished lengths last read per kind, for the same reason. */
  readonly #lastFinished = new Map<string, readonly number[]>()
  #knownSize = 0
  #repairedKeys = 0
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
    this.#calls = new TimedCalls(
      Math.max(1, Math.floor(options.budgetMs / roundTripsPerRequest)),
      {
        threshold: options.breakerThreshold,
        cooldownMs: options.breakerCooldownMs,
        ...(options.now ? { now: options.now } : {}),
      },
      options.onError,
    )
    this.#local = new MemorySessionStore({
      ...(options.localCopies ?? defaultLocalCopies),
      idleTtlMs: options.idleTtlMs,
      maxStateBytes: options.maxStateBytes,
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
    this.#finished = new RedisFinishedSessions(
      this.#redis,
      options.idleTtlMs,
      options.now ?? Date.now,
      undefined,
      (keys) => this.#repaired(keys),
    )
  }

  /** Wrong-typed keys found and deleted since start (shown on /readyz: something else writes under the prefix). */
  repairedKeys(): number {
    return this.#repairedKeys
  }

  #repaired(keys: number): void {
    this.#repairedKeys += keys
    this.#options.onError('wrong-type-repaired', new Error(`deleted ${keys} key(s) of the wrong type under the prefix`))
  }

  /** Reachable: connected, and answering in time (the circuit is closed). */
  healthy(): boolean {
    return this.#redis.status === 'ready' && this.#calls.state() === 'closed'
  }

  circuitState(): CircuitState {
    return this.#calls.state()
  }

  size(): number {
    return this.#knownSize
  }

  /**
   * The shared state, unless this replica's own copy is newer (its last write did not land) or Redis
   * did not answer in time: a slow store then costs sharing, never the conversation's frozen decisions.
   */
  async get(key: string): Promise<ConversationState | undefined> {
    const [read, local] = await Promise.all([
      this.#calls.attempt('get', () => this.#redis.get(`conv:${key}`)),
      this.#local.get(key),
    ])
    return read.answered ? newerState(parsedJson(read.value), local) : local
  }

  async set(key: string, state: ConversationState, before?: ConversationState): Promise<void> {
    await this.#local.set(key, state)
    const json = this.#bounded(state)
    const { kind, lastSeen, requests } = state
    const kindBefore = before?.kind !== undefined && before.kind !== kind ? { kindBefore: before.kind } : {}
    await this.#run('set', () =>
      kind === undefined
        ? this.#redis.set(`conv:${key}`, json, 'PX', this.#options.idleTtlMs)
        : this.#finished
            .write({ conversationKey: key, json, kind, lastSeen, requests, ...kindBefore })
            .catch((error: unknown) => {
              // Filing under the kind failed (not a timeout): the conversation's own state is saved all the same.
              this.#options.onError('finished-write', error as Error)
              return this.#redis.set(`conv:${key}`, json, 'PX', this.#options.idleTtlMs)
            }),
    )
  }

  /** Finished lengths of the kind, counting first those that have gone idle since anyone last looked. */
  async finishedLengths(kind: string): Promise<readonly number[]> {
    const read = await this.#calls.attempt('finished-read', () => this.#finished.read(kind))
    if (!read.answered) return this.#lastFinished.get(kind) ?? []
    const lengths = finishedLengthsOf(read.value)
    this.#lastFinished.delete(kind)
    this.#lastFinished.set(kind, lengths)
    if (this.#lastFinished.size > finishedKindsKept)
      this.#lastFinished.delete(this.#lastFinished.keys().next().value as string)
    return lengths
  }

  async #loadCalibration(
    ratioKey: string,
    family: string,
    scope: string,
    conversation: string | undefined,
  ): Promise<{ ratios: readonly number[]; limit?: number; conversation?: ConversationLesson } | undefined> {
    const limitKey = `limit:${family}:${scope}`
    const result = await this.#run('calibration-load', () => {
      const multi = this.#redis.multi().lrange(`cal:${ratioKey}`, 0, -1).get(limitKey).pttl(limitKey)
      return (conversation === undefined ? multi : multi.get(`calconv:${conversation}`)).exec()
    })
    if (!result) return undefined
    const ratios = ((result[0]?.[1] as string[] | undefined) ?? []).map(Number).filter(Number.isFinite).toReversed()
    const limit = this.#validLimit(limitKey, result[1]?.[1], Number(result[2]?.[1]))
    const taught = parsedJson(result[3]?.[1]) as ConversationLesson | undefined
    return {
      ratios,
      ...(limit === undefined ? {} : { limit }),
      ...(taught === undefined ? {} : { conversation: taught }),
    }
  }

  /**
   * A stored limit as ctxgate writes one: a whole number of tokens on a key that expires within the
   * idle TTL. Anything else (garbage, a key left with no TTL, which would never expire) is dropped.
   */
  #validLimit(key: string, raw: unknown, ttlMs: number): number | undefined {
    if (raw === null || raw === undefined) return undefined
    const limit = Number(raw)
    const wellFormed = Number.isSafeInteger(limit) && limit > 0 && ttlMs > 0 && ttlMs <= this.#options.idleTtlMs
    if (wellFormed) return limit
    this.#options.onError(
      'calibration-limit-invalid',
      new Error(`ignored and deleted a stored limit that ctxgate did not write (ttl ${ttlMs} ms)`),
    )
    this.#redis.del(key).catch(() => undefined)
    return undefined
  }

  /** A conversation's memory lives beside its state, one small key per conversation, and idles out like it. */
  async #pushRatio(
    family: string,
    ratio: number,
    keep: number,
    conversation: { readonly key: string; readonly memory: ConversationLesson } | undefined,
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
    // Never longer than the idle TTL: a read takes a longer-lived key for one ctxgate did not write.
    const expiry = Math.min(ttlMs > 0 ? ttlMs : this.#options.idleTtlMs, this.#options.idleTtlMs)
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

  /** One round trip within its share of the request's budget; undefined when it failed or timed out. */
  async #run<T>(operation: string, call: () => Promise<T>): Promise<T | undefined> {
    const result: Attempt<T> = await this.#calls.attempt(operation, call)
    return result.answered ? result.value : undefined
  }

  /** Keeps one conversation's state under its size cap by forgetting its oldest frozen decisions. */
  #bounded(state: ConversationState): string {
    let json = JSON.stringify(state)
    if (json.length <= this.#options.maxStateBytes) return json
    let keep = Object.keys(state.decisions.results).length + Object.keys(state.decisions.inputs ?? {}).length
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
