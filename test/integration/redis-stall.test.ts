import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicBody, buildMessages, requestsOf, type Json, type Step } from '../helpers/conversations.ts'
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'

const round: Step = {
  kind: 'round',
  calls: 1,
  sizes: [1_500, 1_500],
  outputKind: 'log',
  thinking: false,
  extraField: false,
}

let redis: RedisServer
let stack: Stack

beforeAll(async () => {
  redis = await startRedisServer()
  stack = await startStack({
    mock: { window: 24_000 },
    config: {
      models: [{ match: '*', window: 24_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      sessions: {
        redisUrl: redis.url,
        redisKeyPrefix: 'stall:',
        storeBudgetMs: 200,
        breakerThreshold: 3,
        breakerCooldownMs: 1_500,
      },
    },
  })
})
afterAll(async () => {
  redis.resume()
  await stack.close()
  await redis.stop()
})

async function ready(): Promise<Json> {
  return (await (await request(`${stack.proxyUrl}/readyz`)).body.json()) as Json
}

async function send(messages: Json[]): Promise<number> {
  const answer = await request(`${stack.proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ctxgate-session': 'stalled' },
    body: JSON.stringify(anthropicBody(messages)),
  })
  await answer.body.dump()
  return answer.statusCode
}

describe('a paused Redis (SIGSTOP: connected, never answering)', () => {
  it('prevents a stalled store from holding requests: they are served, the breaker opens and /readyz says so', async () => {
    const requests = requestsOf(buildMessages(Array.from({ length: 12 }, () => round)))
    await eventually(async () => expect((await ready())['storeReachable']).toBe(true))
    expect(await send(requests[0] as Json[])).toBe(200)
    expect(await ready()).toMatchObject({ storeReachable: true, circuit: 'closed' })

    redis.pause()
    const statuses: number[] = []
    for (const messages of requests.slice(1, 8)) statuses.push(await send(messages))
    expect(statuses).toEqual(Array.from({ length: 7 }, () => 200))
    expect(stack.mock.requests).toHaveLength(8)
    // The connection is still up, so only the breaker can tell that Redis is not answering.
    const paused = await ready()
    expect(paused).toMatchObject({ status: 'ready', store: 'redis', storeReachable: false })
    expect(paused['circuit']).not.toBe('closed')
    const metrics = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
    expect(metrics).toMatch(/^ctxgate_store_circuit_open 1$/m)

    redis.resume()
    // After the cool-down one request probes Redis; its answer closes the circuit.
    await eventually(async () => {
      expect(await send(requests[8] as Json[])).toBe(200)
      expect(await ready()).toMatchObject({ storeReachable: true, circuit: 'closed' })
    }, 10_000)
    const recovered = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
    expect(recovered).toMatch(/^ctxgate_store_circuit_open 0$/m)
  })
})
