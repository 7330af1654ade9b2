import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { finishedKept } from '../../src/session/finished-sessions.ts'
import { RedisFinishedSessions } from '../../src/session/redis-finished.ts'
import { RedisSessionStore, type RedisStoreOptions } from '../../src/session/redis-store.ts'
import type { ConversationState } from '../../src/session/session-store.ts'
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts'
import { hookOnClock, type Clock } from '../helpers/hook-on-clock.ts'
import { eventually } from '../helpers/stack.ts'

const idleTtlMs = 60_000
let redis: RedisServer
const opened: { close(): Promise<void> }[] = []

beforeAll(async () => {
  redis = await startRedisServer()
})
afterAll(async () => {
  redis.resume()
  await Promise.all(opened.map((store) => store.close()))
  await redis.stop()
})

/** A connected store on the test's clock; `prefix` keeps each test's keys apart. */
async function storeOn(prefix: string, clock: { now: number }, overrides: Partial<RedisStoreOptions> = {}) {
  const errors: string[] = []
  const store = new RedisSessionStore({
    url: redis.url,
    keyPrefix: prefix,
    idleTtlMs,
    maxSessions: 100,
    maxStateBytes: 262_144,
    // Generous: a loaded machine may answer slowly, and these tests check what is counted, not speed.
    budgetMs: 4_000,
    breakerThreshold: 3,
    breakerCooldownMs: 60_000,
    onError: (operation) => errors.push(operation),
    now: () => clock.now,
    ...overrides,
  })
  opened.push(store)
  await eventually(() => expect(store.healthy()).toBe(true), 10_000)
  return { store, errors }
}

/** One request of a conversation as the rewrite hook records it. */
async function request(store: RedisSessionStore, clock: { now: number }, key: string, kind = 'agent-a') {
  const before = await store.get(key)
  const state: ConversationState = {
    decisions: { results: {} },
    requests: (before?.requests ?? 0) + 1,
    lastSeen: clock.now,
    kind,
  }
  await store.set(key, state, before)
}

describe('finished sessions in Redis', () => {
  it('counts a conversation once it has been idle past the TTL, once, whichever replica looks first', async () => {
    const clock = { now: 1_000_000 }
    const one = (await storeOn('finished-a:', clock)).store
    const two = (await storeOn('finished-a:', clock)).store
    for (let step = 0; step < 4; step++) {
      clock.now += 1_000
      await request(step % 2 === 0 ? one : two, clock, 'c1')
    }
    expect((await one.get('c1'))?.requests).toBe(4)
    clock.now += idleTtlMs
    expect(await two.finishedLengths('agent-a')).toEqual([])
    clock.now += 1
    const [fromOne, fromTwo] = await Promise.all([one.finishedLengths('agent-a'), two.finishedLengths('agent-a')])
    expect(fromOne).toEqual([4])
    expect(fromTwo).toEqual([4])
    // A write of the kind moves finished ones too, and never counts one twice.
    await request(one, clock, 'c2')
    expect(await two.finishedLengths('agent-a')).toEqual([4])
  })

  it('keeps kinds apart, the newest 50 lengths per kind, and every key it writes expiring', async () => {
    const clock = { now: 1_000_000 }
    const { store } = await storeOn('finished-b:', clock)
    for (let session = 1; session <= 60; session++) {
      for (let step = 0; step < session; step++) await request(store, clock, `c${session}`, 'agent-a')
      clock.now += 10
    }
    await request(store, clock, 'other', 'agent-b')
    clock.now += idleTtlMs + 1
    const lengths = await store.finishedLengths('agent-a')
    expect(lengths).toHaveLength(finishedKept)
    expect(lengths).toEqual(Array.from({ length: 50 }, (_, index) => index + 11))
    expect(await store.finishedLengths('agent-b')).toEqual([1])
    const client = new Redis(redis.url)
    try {
      const keys = await client.keys('finished-b:*')
      expect(keys).toContain('finished-b:finished:agent-a')
      for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0)
      // Moved ones leave the live index: nothing left to count twice.
      expect(await client.zcard('finished-b:live:agent-a')).toBe(0)
      expect(await client.hlen('finished-b:lengths:agent-a')).toBe(0)
    } finally {
      client.disconnect()
    }
  })

  it('files a conversation live no longer than twice the idle TTL, so a kind seen once leaves nothing for long', async () => {
    const clock = { now: 1_000_000 }
    const { store } = await storeOn('finished-ttl:', clock)
    await request(store, clock, 'once', 'agent-once')
    const client = new Redis(redis.url)
    try {
      for (const key of ['finished-ttl:live:agent-once', 'finished-ttl:lengths:agent-once']) {
        const left = await client.pttl(key)
        expect(left).toBeGreaterThan(idleTtlMs)
        expect(left).toBeLessThanOrEqual(2 * idleTtlMs)
      }
    } finally {
      client.disconnect()
    }
  })

  it('counts a conversation whose kind changed part way only under its last kind', async () => {
    const clock = { now: 1_000_000 }
    const { store } = await storeOn('finished-switch:', clock)
    for (let step = 0; step < 10; step++) {
      clock.now += 1_000
      await request(store, clock, 'c1', step < 4 ? 'sonnet-agent' : 'opus-agent')
    }
    clock.now += idleTtlMs + 1
    expect(await store.finishedLengths('sonnet-agent')).toEqual([])
    expect(await store.finishedLengths('opus-agent')).toEqual([10])
  })

  it('bounds the conversations filed live per kind, dropping the longest idle uncounted', async () => {
    const clock = { now: 1_000_000 }
    const client = new Redis(redis.url, { keyPrefix: 'finished-c:' })
    try {
      const finished = new RedisFinishedSessions(client, idleTtlMs, () => clock.now, 3)
      for (let session = 1; session <= 5; session++) {
        clock.now += 10
        await finished.write({
          conversationKey: `c${session}`,
          json: '{}',
          kind: 'agent-a',
          lastSeen: clock.now,
          requests: session,
        })
      }
      expect(await client.zrange('live:agent-a', '0', '-1')).toEqual(['c3', 'c4', 'c5'])
      expect(await client.hkeys('lengths:agent-a')).toEqual(['c3', 'c4', 'c5'])
      clock.now += idleTtlMs + 1
      expect(await finished.read('agent-a')).toEqual(['3', '4', '5'])
    } finally {
      client.disconnect()
    }
  })

  it('answers "none known" at once when Redis is paused, without holding the request or throwing', async () => {
    const clock = { now: 1_000_000 }
    const { store, errors } = await storeOn('finished-d:', clock, { budgetMs: 40 })
    await request(store, clock, 'c1')
    redis.pause()
    try {
      expect(await store.finishedLengths('agent-a')).toEqual([])
      expect(errors).toContain('finished-read')
    } finally {
      redis.resume()
    }
  })

  it('changes the decision of a session served by one replica after 5 sessions of its kind finished on another', async () => {
    const clock: Clock = { now: 1_000_000 }
    const replica = (prefix: string) =>
      hookOnClock({
        clock,
        // The prior's cautious 15% quantile, so that a session with nothing finished cannot pay back on its own.
        overrides: { economy: { startTokens: 10_000, shortSessionRequests: 4, forecastQuantile: 0.15 } },
        store: (config, shared) => {
          const redisStore = new RedisSessionStore({
            url: redis.url,
            keyPrefix: prefix,
            idleTtlMs: config.sessions.idleTtlMs,
            maxSessions: 100,
            maxStateBytes: config.sessions.maxStateBytes,
            budgetMs: 4_000,
            breakerThreshold: 3,
            breakerCooldownMs: 60_000,
            onError: () => undefined,
            now: () => shared.now,
          })
          opened.push(redisStore)
          return redisStore
        },
      })
    const one = replica('finished-e:')
    const two = replica('finished-e:')
    const alone = replica('finished-f:')
    await eventually(() => expect([one, two, alone].every(({ store }) => store.healthy())).toBe(true), 10_000)
    for (let index = 0; index < 5; index++) await one.session(`done-${index}`, 25)
    one.idle()
    // Sessions of its kind went on to 25: a batch at 11 pays back in time.
    expect((await two.session('next', 11)).batch).toMatchObject({ reason: 'pays_back' })
    // The same session with nothing finished under its keys is sure of only ~2 more requests: it waits.
    expect(await alone.session('next', 11)).toEqual({ batch: undefined, waited: 'no_payback_in_time' })
  })
})
