import Anthropic from '@anthropic-ai/sdk'
import { Redis } from 'ioredis'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LiveEvent } from '../../src/live/live-event.ts'
import { RedisLiveMirror } from '../../src/live/redis-mirror.ts'
import { addEvent, countersOf } from '../../src/live/session-summary.ts'
import { zeroUsage } from '../../src/model-call/usage.ts'
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedisServer()
})
afterAll(() => redis?.stop())

/** An open /ctxgate/events stream whose frames collect as they arrive. */
async function openEvents(stack: Stack): Promise<{ frames: string[]; close: () => void }> {
  const response = await request(`${stack.proxyUrl}/ctxgate/events`)
  expect(response.statusCode).toBe(200)
  const frames: string[] = []
  let buffer = ''
  response.body.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8')
    const parts = buffer.split('\n\n')
    buffer = parts.pop() ?? ''
    frames.push(...parts)
  })
  response.body.on('error', () => undefined)
  return { frames, close: () => response.body.destroy() }
}

const ask = (stack: Stack, session: string): Promise<unknown> =>
  new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-redis-live', maxRetries: 0 }).messages.create(
    { model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] },
    { headers: { 'x-ctxgate-session': session } },
  )

describe('live page across replicas sharing Redis', () => {
  it("shows on one replica's page what another replica served, as it happens and after a reload", async () => {
    const config = { log: { level: 'silent' as const }, sessions: { redisUrl: redis.url, redisKeyPrefix: 'livetest:' } }
    const a = await startStack({ config })
    const b = await startStack({ config })
    try {
      const live = await openEvents(b)
      await eventually(() => expect(live.frames.some((frame) => frame.includes('event: snapshot'))).toBe(true))
      await ask(a, 'served-by-a')
      await eventually(() => expect(live.frames.some((frame) => frame.startsWith('event: request'))).toBe(true))
      const update = JSON.parse(
        live.frames.find((frame) => frame.startsWith('event: request'))!.split('data: ')[1]!,
      ) as { summary: { requests: number; session: string } }
      expect(update.summary.requests).toBe(1)
      live.close()

      await ask(b, 'served-by-a')
      const reloaded = await openEvents(a)
      await eventually(() => expect(reloaded.frames.some((frame) => frame.includes('event: snapshot'))).toBe(true))
      const snapshot = JSON.parse(reloaded.frames[0]!.split('data: ')[1]!) as {
        sessions: { summary: { session: string; requests: number }; requests: unknown[] }[]
      }
      const shared = snapshot.sessions.find((view) => view.summary.session === update.summary.session)
      expect(shared?.summary.requests).toBe(2)
      expect(shared?.requests).toHaveLength(2)
      reloaded.close()

      const client = new Redis(redis.url)
      const keys = await client.keys('livetest:live:*')
      expect(keys.length).toBeGreaterThanOrEqual(3)
      for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0)
      client.disconnect()
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('serves requests without waiting when Redis is gone, counts the failures, and falls back to memory', async () => {
    const lost = await startRedisServer()
    const stack = await startStack({
      config: { log: { level: 'silent' }, sessions: { redisUrl: lost.url, redisKeyPrefix: 'lost:' } },
    })
    try {
      await lost.stop()
      await ask(stack, 'no-redis')
      await eventually(async () => {
        const metrics = await stack.app.registry.getSingleMetricAsString('ctxgate_live_store_errors_total')
        expect(metrics).toMatch(/ctxgate_live_store_errors_total\{operation="record"\} [1-9]/)
      })
      const live = await openEvents(stack)
      await eventually(() => expect(live.frames.some((frame) => frame.includes('event: snapshot'))).toBe(true))
      expect(live.frames[0]).toContain('claude-sonnet-4-5')
      live.close()
    } finally {
      await stack.close()
      await lost.stop()
    }
  })
})

describe('RedisLiveMirror', () => {
  const event = (session: string, at: number): LiveEvent => ({
    at,
    session,
    client: 'Claude Code',
    model: 'claude-sonnet-4-5',
    route: 'anthropic-messages',
    status: 200,
    durationMs: 5,
    usage: { ...zeroUsage, inputTokens: 10, cacheReadTokens: 1_000 },
    folded: 0,
    cleared: 0,
    dropped: 0,
    tokensRemoved: 0,
    newBatch: false,
    refusalAvoided: false,
  })

  it('keeps its own keys bounded: N requests per session, M sessions, the evicted ones deleted, oversize refused', async () => {
    const errors: string[] = []
    const mirror = new RedisLiveMirror({
      url: redis.url,
      keyPrefix: 'bounds:',
      ttlMs: 60_000,
      bounds: { maxSessions: 2, maxRequestsPerSession: 3 },
      timeoutMs: 1_000,
      onError: (operation) => errors.push(operation),
    })
    const client = new Redis(redis.url)
    try {
      // Writes fail fast (and are counted) until the connection is up; the test starts once it is.
      await eventually(async () => expect(await mirror.snapshot()).toBeDefined())
      let at = 0
      for (const session of ['s1', 's1', 's1', 's1', 's1', 's2', 's3']) {
        const item = event(session, at++)
        const stored = await mirror.record(item, countersOf(item, false), 0)
        expect(stored?.session).toBe(session)
      }
      await eventually(async () => expect(await client.zrange('bounds:live:sessions', '0', '-1')).toEqual(['s2', 's3']))
      expect(await client.exists('bounds:live:req:s1', 'bounds:live:sum:s1')).toBe(0)
      const snapshot = await mirror.snapshot()
      expect(snapshot?.sessions.map((view) => view.summary.session)).toEqual(['s3', 's2'])

      for (let index = 0; index < 5; index++)
        await mirror.record(event('s3', at++), countersOf(event('s3', 0), false), 0)
      expect(await client.llen('bounds:live:req:s3')).toBe(3)
      const s3 = (await mirror.snapshot())?.sessions[0]
      expect(s3?.summary.requests).toBe(6)
      expect(s3?.requests.map((item) => item.at)).toEqual([9, 10, 11])
      // Totals in Redis match the same requests folded in memory.
      let local = addEvent(undefined, event('s3', 6))
      for (let index = 0; index < 5; index++) local = addEvent(local, event('s3', 7 + index))
      expect(s3?.summary.billedTokens).toBeCloseTo(local.billedTokens)

      const huge = { ...event('s4', at++), model: 'x'.repeat(5_000) }
      expect(await mirror.record(huge, countersOf(huge, false), 0)).toBeUndefined()
      expect(errors).toContain('oversize')
    } finally {
      client.disconnect()
      await mirror.close()
    }
  })
})
