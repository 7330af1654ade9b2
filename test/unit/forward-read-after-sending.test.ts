import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { Registry } from 'prom-client'
import { Agent, request, type Dispatcher } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Calibration } from '../../src/calibration/calibration.ts'
import { loadConfig } from '../../src/config/load-config.ts'
import { forward } from '../../src/forward/forward.ts'
import type { ForwardDeps } from '../../src/forward/forward-types.ts'
import { readAfterSendingFor } from '../../src/forward/read-after-sending.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { createLogger } from '../../src/log/logger.ts'
import { createProxyMetrics } from '../../src/metrics/proxy-metrics.ts'
import { ModelLabels } from '../../src/metrics/model-labels.ts'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'
import { modelRoutes } from '../../src/providers/registry.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { SessionAccounting } from '../../src/session/accounting.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'

/** An upstream pool that notes when a request is handed to it. */
class NotingAgent extends Agent {
  readonly #note: (event: string) => void
  constructor(note: (event: string) => void) {
    super()
    this.#note = note
  }
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.#note('sent')
    return super.dispatch(options, handler)
  }
}

interface Forwarding {
  readonly url: string
  readonly mock: MockServer
  /** `sent` when the body is handed to the upstream pool, `read` when the hook is called. */
  readonly events: string[]
  readonly logLines: Record<string, unknown>[]
  readonly registry: Registry
  close(): Promise<void>
}

/** forward() on a plain node:http server against the fake upstream, with ctxgate's own hook. */
async function forwarding(rewriteEnabled: boolean): Promise<Forwarding> {
  const mock = await startMockServer()
  const events: string[] = []
  const logLines: Record<string, unknown>[] = []
  const registry = new Registry()
  const config = loadConfig({
    env: {},
    overrides: {
      rewrite: { enabled: rewriteEnabled },
      upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } },
    },
  })
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        logLines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const logger = createLogger('info', sink)
  const hook = createRewriteHook({
    config,
    store: new MemorySessionStore(config.sessions),
    calibration: new Calibration(),
    estimator: new TokenEstimator(),
    logger,
  })
  const route = modelRoutes.find((candidate) => candidate.path === '/v1/messages')
  if (!route) throw new Error('no Messages route')
  const read = hook(route.format.name)
  if (!read) throw new Error('no hook for Messages')
  const agent = new NotingAgent((event) => events.push(event))
  const deps: ForwardDeps = {
    config,
    upstreams: {
      anthropic: { id: 'anthropic', origin: new URL(mock.url).origin, basePath: '', dispatcher: agent },
      openai: { id: 'openai', origin: new URL(mock.url).origin, basePath: '', dispatcher: agent },
    },
    metrics: createProxyMetrics(registry),
    models: new ModelLabels(),
    sessions: new SessionAccounting(100),
    logger,
    sharedState: false,
    readAfterSending: readAfterSendingFor(config, { ownHook: true }),
  }
  const client = createServer((raw, response) => {
    const chunks: Buffer[] = []
    raw.on('data', (chunk: Buffer) => chunks.push(chunk))
    raw.on('end', () => {
      const input = { id: 'req-1', method: 'POST', url: raw.url ?? '/', headers: raw.headers, raw }
      void forward(deps, {
        request: input,
        reply: { raw: response, hijack: () => undefined },
        provider: route.format.provider,
        format: route.format,
        body: Buffer.concat(chunks),
        prepare: (body, headers, options) => {
          events.push('read')
          return read(body, headers, options)
        },
      })
    })
  })
  await new Promise<void>((resolve) => client.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(client.address() as AddressInfo).port}`
  return {
    url,
    mock,
    events,
    logLines,
    registry,
    async close() {
      await new Promise((resolve) => client.close(resolve))
      await mock.close()
    },
  }
}

const messagesBody = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'hi' }],
})
const messagesHeaders = {
  'content-type': 'application/json',
  'x-api-key': 'sk-test',
  'anthropic-version': '2023-06-01',
}

async function send(at: Forwarding, extraHeaders: Record<string, string> = {}): Promise<void> {
  const answer = await request(`${at.url}/v1/messages`, {
    method: 'POST',
    headers: { ...messagesHeaders, ...extraHeaders },
    body: messagesBody,
  })
  expect(answer.statusCode).toBe(200)
  await answer.body.dump()
}

describe('forwarding with rewriting off', () => {
  let off: Forwarding
  beforeAll(async () => {
    off = await forwarding(false)
  })
  afterAll(() => off.close())

  it('sends the request before the hook reads it, and the record still has what the hook read', async () => {
    await send(off)
    expect(off.events).toEqual(['sent', 'read'])
    expect(off.mock.requests[0]?.body).toBe(messagesBody)
    const line = off.logLines.find((entry) => entry['msg'] === 'request')
    expect(line).toMatchObject({ rewrite: 'disabled', outcome: 'complete', status: 200 })
    expect(line?.['outputTokens']).toBeGreaterThan(0)
    const requests = await off.registry.getSingleMetricAsString('ctxgate_requests_total')
    expect(requests).toContain('model="claude-sonnet-4-5"')
  })
})

describe('forwarding with rewriting on', () => {
  let on: Forwarding
  beforeAll(async () => {
    on = await forwarding(true)
  })
  afterAll(() => on.close())

  it('sends a request that asks for passthrough before the hook reads it, and reads any other first', async () => {
    await send(on, { 'x-ctxgate-mode': 'passthrough' })
    expect(on.events).toEqual(['sent', 'read'])
    await send(on)
    expect(on.events).toEqual(['sent', 'read', 'read', 'sent'])
    expect(on.mock.requests.map((sent) => sent.body)).toEqual([messagesBody, messagesBody])
    const lines = on.logLines.filter((entry) => entry['msg'] === 'request')
    expect(lines[0]).toMatchObject({ rewrite: 'passthrough', outcome: 'complete', status: 200 })
    expect(lines[0]?.['outputTokens']).toBeGreaterThan(0)
    expect(typeof lines[1]?.['rewrite']).toBe('object')
  })
})
