import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Calibration } from '../../src/calibration/calibration.ts'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { createLogger } from '../../src/log/logger.ts'
import type { PrepareBody } from '../../src/request/prepared.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { ConversationState } from '../../src/session/session-store.ts'
import { anthropicBody, buildMessages, requestsOf, type Step } from '../helpers/conversations.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

const settings = {
  models: [{ match: '*', window: 9_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
  economy: { startTokens: 1_000, shortSessionRequests: 2 },
  server: { responseHeaders: true },
}

/** A ctxgate whose rewrite hook's saved states the test reads; `eager` hides the caller's offer to record after dispatch. */
async function stackWith(eager: boolean, upstreamUrl?: string, saveDelayMs = 0) {
  const config = loadConfig({ overrides: settings as DeepPartial<Config> })
  const saved: { key: string; state: ConversationState }[] = []
  let ticks = 1_800_000_000_000
  const store = new MemorySessionStore(config.sessions)
  const keeping = Object.assign(Object.create(store) as MemorySessionStore, {
    set: async (key: string, state: ConversationState) => {
      // A slow store (a network one): the state is saved only once the delay is over.
      if (saveDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, saveDelayMs))
      saved.push({ key, state })
      await store.set(key, state)
    },
    get: (key: string) => store.get(key),
  })
  const hooks = createRewriteHook({
    config,
    store: keeping,
    calibration: new Calibration(),
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
    // Each request reads the clock once: 30 s apart in both stacks, whatever the machine's timing.
    now: () => (ticks += 30_000),
  })
  const prepareFor = (format: WireFormat): PrepareBody | undefined => {
    const hook = hooks(format)
    if (!hook || !eager) return hook
    return (body, incoming) => hook(body, incoming)
  }
  const upstream = upstreamUrl ? { upstreams: { anthropic: { url: upstreamUrl } } } : {}
  const stack = await startStack({ config: { ...settings, ...upstream } as DeepPartial<Config>, prepareFor })
  return { stack, saved }
}

/** A log line without what differs between two runs of the same requests (ids, timings). */
function comparable(line: Record<string, unknown>): Record<string, unknown> {
  const { reqId: _id, durationMs: _duration, time: _time, pid: _pid, hostname: _host, ...rest } = line
  return rest
}

/** The counters a request moves (no timings). */
async function counters(stack: Stack): Promise<string[]> {
  const text = await stack.app.registry.metrics()
  return text
    .split('\n')
    .filter((line) => line.startsWith('ctxgate_') && !/seconds|_ms|duration|overhead|bytes_resident/.test(line))
}

/** Both stacks logged every request alike, saved the same states and moved the same counters. */
async function expectSameRecords(
  eager: Awaited<ReturnType<typeof stackWith>>,
  deferred: Awaited<ReturnType<typeof stackWith>>,
): Promise<void> {
  await eventually(() => expect(requestLogs(deferred.stack)).toHaveLength(bodies.length))
  await eventually(() => expect(requestLogs(eager.stack)).toHaveLength(bodies.length))
  expect(requestLogs(deferred.stack).map(comparable)).toEqual(requestLogs(eager.stack).map(comparable))
  expect(deferred.saved.map(({ key, state }) => ({ key, state }))).toEqual(
    eager.saved.map(({ key, state }) => ({ key, state })),
  )
  expect(await counters(deferred.stack)).toEqual(await counters(eager.stack))
}

const steps: Step[] = [
  { kind: 'turn', calls: 1, sizes: [100], outputKind: 'prose', thinking: false, extraField: false },
  { kind: 'round', calls: 1, sizes: [600, 0, 0], outputKind: 'log', thinking: false, extraField: false },
  { kind: 'round', calls: 2, sizes: [3_000, 2_500, 0], outputKind: 'json', thinking: false, extraField: true },
  { kind: 'round', calls: 3, sizes: [9_000, 8_000, 7_000], outputKind: 'hex', thinking: false, extraField: false },
  { kind: 'turn', calls: 1, sizes: [100], outputKind: 'prose', thinking: false, extraField: false },
  { kind: 'round', calls: 1, sizes: [12_000, 0, 0], outputKind: 'log', thinking: false, extraField: false },
]
const bodies = requestsOf(buildMessages(steps)).map((messages) =>
  JSON.stringify(anthropicBody(messages, { metadata: { user_id: 'records-after-dispatch' } })),
)

/** Sends each body once its predecessor's headers are back (the client's next request follows the answer at once). */
async function sendBackToBack(stack: Stack): Promise<Record<string, string>[]> {
  const headers: Record<string, string>[] = []
  let previous: Promise<void> = Promise.resolve()
  for (const body of bodies) {
    const answer = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'claude-cli/2.0.0' },
      body,
    })
    const own = Object.fromEntries(
      Object.entries(answer.headers).filter(([name]) => name.startsWith('x-ctxgate-')),
    ) as Record<string, string>
    headers.push({ status: String(answer.statusCode), ...own })
    // The body is read while the next request goes out.
    const reading = answer.body.dump()
    previous = previous.then(() => reading)
  }
  await previous
  return headers
}

describe('records made after dispatch, through the proxy', () => {
  let eager: Awaited<ReturnType<typeof stackWith>>
  let deferred: Awaited<ReturnType<typeof stackWith>>
  beforeAll(async () => {
    eager = await stackWith(true)
    deferred = await stackWith(false)
  })
  afterAll(async () => {
    await eager.stack.close()
    await deferred.stack.close()
  })

  it('send the same bytes, answer with the same headers, log, count and save the same, requests back to back', async () => {
    const eagerHeaders = await sendBackToBack(eager.stack)
    const deferredHeaders = await sendBackToBack(deferred.stack)
    expect(deferredHeaders).toEqual(eagerHeaders)
    // Some requests of this conversation went as sent, some were edited (or the check would be empty).
    expect(eagerHeaders.map((headers) => headers['x-ctxgate-edit'])).toContain('none')
    expect(eagerHeaders.map((headers) => headers['x-ctxgate-edit'])).not.toEqual(eagerHeaders.map(() => 'none'))
    expect(deferred.stack.mock.requests.map((seen) => seen.body)).toEqual(
      eager.stack.mock.requests.map((seen) => seen.body),
    )
    await expectSameRecords(eager, deferred)
  })
})

describe('records made after dispatch, when the upstream cannot be reached', () => {
  let eager: Awaited<ReturnType<typeof stackWith>>
  let deferred: Awaited<ReturnType<typeof stackWith>>
  beforeAll(async () => {
    // Nothing listens on port 9 of the loopback: every attempt is refused.
    eager = await stackWith(true, 'http://127.0.0.1:9')
    deferred = await stackWith(false, 'http://127.0.0.1:9')
  })
  afterAll(async () => {
    await eager.stack.close()
    await deferred.stack.close()
  })

  it('log, count and save the same, and answer with the same error', async () => {
    const eagerHeaders = await sendBackToBack(eager.stack)
    const deferredHeaders = await sendBackToBack(deferred.stack)
    expect(deferredHeaders).toEqual(eagerHeaders)
    expect(eagerHeaders.every((headers) => headers['status'] === '502')).toBe(true)
    await expectSameRecords(eager, deferred)
    expect(requestLogs(deferred.stack).map(comparable)[0]).toMatchObject({ outcome: 'upstream_unreachable', turn: 1 })
  })
})

describe('records made after dispatch, when the upstream refuses every request for its length', () => {
  let refusing: Server
  let eager: Awaited<ReturnType<typeof stackWith>>
  let deferred: Awaited<ReturnType<typeof stackWith>>
  const refused: string[] = []
  beforeAll(async () => {
    // Anthropic's length refusal (docs/proxy.md, refits): the first request of the conversation is
    // short enough to go before it is planned, and its refit must wait for the plan made after it.
    refusing = createServer((incoming, response) => {
      const chunks: Buffer[] = []
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
      incoming.on('end', () => {
        refused.push(Buffer.concat(chunks).toString('utf8'))
        response.writeHead(400, { 'content-type': 'application/json' })
        response.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'invalid_request_error', message: 'prompt is too long: 300000 tokens > 200000 maximum' },
          }),
        )
      })
    })
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`
    eager = await stackWith(true, url)
    deferred = await stackWith(false, url)
  })
  afterAll(async () => {
    await eager.stack.close()
    await deferred.stack.close()
    refusing.closeAllConnections()
    await new Promise((resolve) => refusing.close(resolve))
  })

  it('answer, log, count and save the same, refits included', async () => {
    const eagerHeaders = await sendBackToBack(eager.stack)
    const eagerSent = refused.splice(0)
    const deferredHeaders = await sendBackToBack(deferred.stack)
    expect(deferredHeaders).toEqual(eagerHeaders)
    expect(eagerHeaders.every((headers) => headers['status'] === '400')).toBe(true)
    // The same requests and refits reached the upstream, in the same order.
    expect(refused).toEqual(eagerSent)
    await expectSameRecords(eager, deferred)
  })
})

describe('records made after dispatch, with a slow store', () => {
  let slow: Awaited<ReturnType<typeof stackWith>>
  beforeAll(async () => {
    slow = await stackWith(false, undefined, 150)
  })
  afterAll(() => slow.stack.close())

  it('are saved before the client has the answer, so its next request reads them', async () => {
    for (const [index, body] of bodies.slice(0, 2).entries()) {
      const answer = await request(`${slow.stack.proxyUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'claude-cli/2.0.0' },
        body,
      })
      // The upstream answered long before the store did: the headers still waited for the save.
      expect(slow.saved).toHaveLength(index + 1)
      expect(slow.saved.at(-1)?.state.requests).toBe(index + 1)
      expect(answer.headers['x-ctxgate-edit']).toBe('none')
      await answer.body.dump()
    }
  })
})
