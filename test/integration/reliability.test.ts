import { gzipSync } from 'node:zlib'
import Anthropic from '@anthropic-ai/sdk'
import { Agent, request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Fault } from '../../src/mock/faults.ts'
import { useScriptedStack } from '../helpers/scripted-upstream.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack

beforeAll(async () => {
  stack = await startStack({
    config: { upstream: { headersTimeoutMs: 800, bodyTimeoutMs: 800, keepAliveTimeoutMs: 100 } },
  })
})
afterAll(() => stack.close())

const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
const post = (headers: Record<string, string> = {}, signal?: AbortSignal) =>
  request(`${stack.proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body,
    ...(signal ? { signal } : {}),
  })

describe('upstream statuses', () => {
  it.each([500, 502, 503, 504])('retries one %i and answers 200 (2 attempts)', async (status) => {
    stack.mock.reset()
    stack.mock.faults.push([{ kind: 'status', status } satisfies Fault])
    const answer = await post()
    expect(answer.statusCode).toBe(200)
    await answer.body.dump()
    expect(stack.mock.requests).toHaveLength(2)
  })

  it('passes a slow drip through, chunk by chunk, within the body timeout', async () => {
    const answer = await post({ 'x-mock-fault': '{"kind":"drip","delayMs":60}' }, undefined)
    const text = await answer.body.text()
    expect(answer.statusCode).toBe(200)
    expect(text).toContain('mock upstream')
  })

  it('passes a 200 that is not JSON through untouched', async () => {
    const answer = await post({ 'x-mock-fault': 'not-json' })
    expect(answer.statusCode).toBe(200)
    expect(await answer.body.text()).toBe('<html>oops</html>')
  })
})

describe('odd upstream bodies', () => {
  const scripted = useScriptedStack()

  it('relays malformed SSE as sent, without choking its own parser', async () => {
    const garbage = Buffer.concat([
      Buffer.from('data: {not json\n\nevent: x\ndata: '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('\n\n: comment\nretry: abc\nid: \u0000\n\ndata: [DONE]\n\n'),
    ])
    scripted.upstream.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.end(garbage)
    })
    const answer = await request(`${scripted.stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"stream":true}',
    })
    expect(Buffer.from(await answer.body.arrayBuffer()).equals(garbage)).toBe(true)
  })

  it('keeps a gzip-encoded answer compressed for clients that decode it themselves, and the SDK still reads it', async () => {
    const message = {
      id: 'msg_gz',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'zipped' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 1 },
    }
    const zipped = gzipSync(JSON.stringify(message))
    scripted.upstream.handle((_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(zipped.length),
      })
      response.end(zipped)
    })
    const answer = await request(`${scripted.stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    expect(answer.headers['content-encoding']).toBe('gzip')
    expect(Buffer.from(await answer.body.arrayBuffer()).equals(zipped)).toBe(true)
    const sdk = new Anthropic({ baseURL: scripted.stack.proxyUrl, apiKey: 'k', maxRetries: 0 })
    expect(
      (await sdk.messages.create({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }))
        .content[0],
    ).toMatchObject({ text: 'zipped' })
  })
})

describe('clients that leave', () => {
  it('aborts the upstream request when the client leaves before the upstream answers', async () => {
    stack.mock.reset()
    const controller = new AbortController()
    const pending = post({ 'x-mock-fault': 'hang' }, controller.signal).catch(() => undefined)
    await eventually(() => expect(stack.mock.requests).toHaveLength(1))
    controller.abort()
    await pending
    await eventually(() => expect(stack.mock.requests[0]?.closedEarly).toBe(true), 1_000)
    await eventually(() => expect(requestLogs(stack).at(-1)).toMatchObject({ outcome: 'client_closed' }))
  })

  it('leaks no sockets or timers after many aborted, failed and completed requests', async () => {
    const resources = () =>
      process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap' || kind === 'Timeout').length
    const client = new Agent({ keepAliveTimeout: 50 })
    const baseline = resources()
    for (let round = 0; round < 10; round++) {
      const controller = new AbortController()
      const aborted = request(`${stack.proxyUrl}/v1/messages`, {
        method: 'POST',
        dispatcher: client,
        signal: controller.signal,
        headers: { 'content-type': 'application/json', 'x-mock-chunk-delay-ms': '50' },
        body: JSON.stringify({ ...JSON.parse(body), stream: true }),
      })
        .then((answer) => answer.body.text())
        .catch(() => undefined)
      setTimeout(() => controller.abort(), 30)
      const failed = request(`${stack.proxyUrl}/v1/messages`, {
        method: 'POST',
        dispatcher: client,
        headers: { 'content-type': 'application/json', 'x-mock-fault': '{"kind":"status","status":400}' },
        body,
      }).then((answer) => answer.body.text())
      const completed = request(`${stack.proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        dispatcher: client,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      }).then((answer) => answer.body.text())
      await Promise.all([aborted, failed, completed])
    }
    await client.close()
    // Keep-alive pools on both sides idle out (100 ms upstream, 50 ms here); then the count is back.
    await eventually(() => expect(resources()).toBeLessThanOrEqual(baseline + 2), 3_000)
  })
})
