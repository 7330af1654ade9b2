import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicBody, buildMessages, requestsOf, type Json, type Step } from '../helpers/conversations.ts'
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'

const round = (size: number, kind: Step['outputKind']): Step => ({
  kind: 'round',
  calls: 2,
  sizes: [size, size, size],
  outputKind: kind,
  thinking: false,
  extraField: false,
})
const limits = {
  models: [{ match: '*', window: 24_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
}

let redis: RedisServer
// storeBudgetMs 1000: a loaded test machine may answer slower than the default budget, and this file checks bytes, not speed.

beforeAll(async () => {
  redis = await startRedisServer()
})
afterAll(() => redis.stop())

/** Sends every request of the conversation, alternating over the given proxies; returns what the upstream received. */
async function run(proxies: readonly Stack[], mock: MockServer, requests: readonly Json[][]): Promise<string[]> {
  for (const [index, messages] of requests.entries()) {
    const proxy = proxies[index % proxies.length] as Stack
    const answer = await request(`${proxy.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'x-ctxgate-session': 'replicated',
      },
      body: JSON.stringify({ ...anthropicBody(messages), stream: index % 2 === 0 }),
    })
    await answer.body.text()
    expect(answer.statusCode).toBe(200)
  }
  return mock.requests.map((entry) => entry.body)
}

describe('several replicas sharing one Redis', () => {
  it('send byte-identical rewritten requests to what a single process sends, so the cache keeps hitting', async () => {
    const steps = Array.from({ length: 14 }, (_, index) =>
      round(index % 3 === 0 ? 5_000 : 1_500, index % 2 === 0 ? 'json' : 'log'),
    )
    const requests = requestsOf(buildMessages(steps))

    const single = await startStack({
      mock: { window: 24_000 },
      config: { ...limits, sessions: { redisUrl: redis.url, redisKeyPrefix: 'single:', storeBudgetMs: 1000 } },
    })
    const sharedMock = await startMockServer({ window: 24_000 })
    const replicaConfig = {
      ...limits,
      upstreams: { anthropic: { url: sharedMock.url }, openai: { url: sharedMock.url } },
      sessions: { redisUrl: redis.url, redisKeyPrefix: 'shared:', storeBudgetMs: 1000 },
    }
    const replicaA = await startStack({ config: replicaConfig })
    const replicaB = await startStack({ config: replicaConfig })
    try {
      const alone = await run([single], single.mock, requests)
      const replicated = await run([replicaA, replicaB], sharedMock, requests)
      expect(replicated).toHaveLength(requests.length)
      // The conversation needed edits, so the comparison means something.
      expect(alone.some((body) => body.includes('ctxgate'))).toBe(true)
      for (const [index, body] of alone.entries()) expect(replicated[index], `request ${index + 1}`).toBe(body)
      const sessions = (await (await request(`${replicaB.proxyUrl}/ctxgate/sessions/replicated`)).body.json()) as {
        turns: number
        billedTokens: number
        uneditedBilledTokens: number
        dollars: number
      }
      expect(sessions.turns).toBe(requests.length)
      // What the session cost, summed over both replicas' answers in Redis (whole millionths of a dollar there).
      expect(sessions.billedTokens).toBeGreaterThan(0)
      expect(sessions.uneditedBilledTokens).toBeGreaterThan(sessions.billedTokens)
      expect(sessions.dollars).toBeGreaterThan(0)
    } finally {
      await Promise.all([single.close(), replicaA.close(), replicaB.close(), sharedMock.close()])
    }
  })

  it('keeps serving when Redis dies mid-run, says so on /readyz, and counts the failures', async () => {
    const stack = await startStack({
      mock: { window: 24_000 },
      config: { ...limits, sessions: { redisUrl: redis.url, redisKeyPrefix: 'dies:' } },
    })
    try {
      const requests = requestsOf(buildMessages(Array.from({ length: 10 }, () => round(2_000, 'json'))))
      await eventually(async () =>
        expect(((await (await request(`${stack.proxyUrl}/readyz`)).body.json()) as Json)['storeReachable']).toBe(true),
      )
      await run([stack], stack.mock, requests.slice(0, 4))
      await redis.stop()
      const statuses: number[] = []
      for (const messages of requests.slice(4)) {
        const answer = await request(`${stack.proxyUrl}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(anthropicBody(messages)),
        })
        await answer.body.dump()
        statuses.push(answer.statusCode)
      }
      expect(statuses.every((status) => status === 200)).toBe(true)
      const ready = await request(`${stack.proxyUrl}/readyz`)
      expect(ready.statusCode).toBe(200)
      expect(await ready.body.json()).toMatchObject({ status: 'ready', store: 'redis', storeReachable: false })
      const metrics = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
      expect(metrics).toMatch(/ctxgate_store_errors_total\{operation="(get|set|connection)"\} [1-9]/)
      await redis.start()
      await eventually(
        async () =>
          expect(((await (await request(`${stack.proxyUrl}/readyz`)).body.json()) as Json)['storeReachable']).toBe(
            true,
          ),
        8_000,
      )
    } finally {
      await stack.close()
    }
  })
})
