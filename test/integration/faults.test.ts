import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Fault } from '../../src/mock/faults.ts'
import { holdTimeouts, settle } from '../helpers/held-timeouts.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
let anthropic: Anthropic

beforeAll(async () => {
  stack = await startStack({ config: { upstream: { headersTimeoutMs: 600, bodyTimeoutMs: 600 } } })
  anthropic = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-fault-key', maxRetries: 0 })
})
afterAll(() => stack.close())
beforeEach(() => stack.mock.reset())

const ask = (options?: Anthropic.RequestOptions) =>
  anthropic.messages.create(
    { model: 'claude-sonnet-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] },
    options,
  )
const queue = (...faults: Fault[]) => stack.mock.faults.push(faults)

describe('upstream faults before the first byte', () => {
  it('retries a reset before headers; the client sees one 200', async () => {
    queue({ kind: 'reset' })
    const message = await ask()
    expect(message.type).toBe('message')
    expect(stack.mock.requests).toHaveLength(2)
  })

  it('retries a reset after headers but before any body byte', async () => {
    queue({ kind: 'reset-after-headers' })
    await expect(ask()).resolves.toMatchObject({ type: 'message' })
    expect(stack.mock.requests).toHaveLength(2)
  })

  it('retries a 529 overloaded once', async () => {
    queue({ kind: 'status', status: 529 })
    await expect(ask()).resolves.toMatchObject({ type: 'message' })
    expect(stack.mock.requests).toHaveLength(2)
  })

  it('waits the retry-after seconds of a 429 before trying again', async () => {
    const backoff = holdTimeouts(1_000)
    queue({ kind: 'status', status: 429, retryAfter: '1' })
    const answer = ask()
    await backoff.started()
    await settle()
    expect(stack.mock.requests).toHaveLength(1)
    backoff.release()
    await expect(answer).resolves.toMatchObject({ type: 'message' })
    expect(stack.mock.requests).toHaveLength(2)
  })

  it('honours retry-after-ms over retry-after', async () => {
    const backoff = holdTimeouts(50)
    queue({ kind: 'status', status: 429, retryAfter: '30', retryAfterMs: 50 })
    const answer = ask()
    await backoff.started()
    backoff.release()
    await expect(answer).resolves.toMatchObject({ type: 'message' })
    expect(backoff.asked(30_000)).toBe(false)
  })

  it('gives up after its attempts, returns the upstream error and tells the SDK not to retry', async () => {
    queue({ kind: 'status', status: 529 }, { kind: 'status', status: 529 }, { kind: 'status', status: 529 })
    const sdkWithRetries = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-fault-key', maxRetries: 2 })
    const failure = await sdkWithRetries.messages
      .create({ model: 'claude-sonnet-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Anthropic.APIError)
    expect((failure as InstanceType<typeof Anthropic.APIError>).status).toBe(529)
    expect((failure as InstanceType<typeof Anthropic.APIError>).headers?.get('x-should-retry')).toBe('false')
    // 3 attempts by ctxgate, none more by the SDK.
    expect(stack.mock.requests).toHaveLength(3)
  })

  it('never retries a 400', async () => {
    queue({ kind: 'status', status: 400 })
    await expect(ask()).rejects.toMatchObject({ status: 400 })
    expect(stack.mock.requests).toHaveLength(1)
  })

  it('does not retry when the upstream says x-should-retry: false', async () => {
    queue({ kind: 'status', status: 503, shouldRetry: false })
    await expect(ask()).rejects.toMatchObject({ status: 503 })
    expect(stack.mock.requests).toHaveLength(1)
  })

  // Undici's own timers end these two; the stack's 600 ms limits are the real wait they cost.
  it('answers a hung upstream with a timeout error in the Anthropic shape', async () => {
    const failure = await ask({ headers: { 'x-mock-fault': 'hang' } }).catch((error: unknown) => error)
    expect(failure).toMatchObject({ status: 504, error: { type: 'error', error: { type: 'timeout_error' } } })
    expect(stack.mock.requests).toHaveLength(1)
  })

  it('answers an unreachable upstream with 502 in the OpenAI shape after its retries', async () => {
    const closed = await startStack({ config: { upstreams: { openai: { url: 'http://127.0.0.1:9' } } } })
    try {
      const client = new OpenAI({ baseURL: `${closed.proxyUrl}/v1`, apiKey: 'sk-x', maxRetries: 0 })
      const failure = await client.chat.completions
        .create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(OpenAI.APIError)
      expect(failure).toMatchObject({ status: 502, error: { type: 'server_error', code: 'upstream_unreachable' } })
      expect((failure as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe('false')
      expect(requestLogs(closed)[0]).toMatchObject({ attempts: 3, outcome: 'upstream_unreachable' })
    } finally {
      await closed.close()
    }
  })
})

describe('failures after the first byte', () => {
  it('ends an Anthropic stream with an error event when the upstream resets mid-stream, without retrying', async () => {
    const stream = anthropic.messages.stream(
      { model: 'claude-sonnet-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-mock-fault': '{"kind":"reset-mid-stream","afterFrames":3}' } },
    )
    const seen: string[] = []
    const failure = await (async () => {
      for await (const event of stream) seen.push(event.type)
    })().catch((error: unknown) => error)
    expect(seen[0]).toBe('message_start')
    expect(failure).toBeInstanceOf(Anthropic.APIError)
    expect(String((failure as Error).message)).toContain('ctxgate')
    expect(stack.mock.requests).toHaveLength(1)
  })

  it('ends an OpenAI stream with an error the SDK raises when the upstream resets mid-stream', async () => {
    const client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-x', maxRetries: 0 })
    const stream = await client.chat.completions.create(
      { model: 'gpt-5', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-mock-fault': '{"kind":"reset-mid-stream","afterFrames":2}' } },
    )
    const failure = await (async () => {
      for await (const chunk of stream) void chunk
    })().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Error)
    expect(String((failure as Error).message)).toContain('ctxgate')
  })

  it('passes an upstream error event through as sent', async () => {
    const stream = anthropic.messages.stream(
      { model: 'claude-sonnet-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-mock-fault': 'error-mid-stream' } },
    )
    const failure = await stream.finalMessage().catch((error: unknown) => error)
    expect(failure).toMatchObject({ error: { error: { type: 'overloaded_error' } } })
  })

  it('ends a stream that goes silent after the body timeout instead of hanging', async () => {
    const stream = anthropic.messages.stream(
      { model: 'claude-sonnet-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-mock-fault': 'stall-mid-stream' } },
    )
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError)
    expect(stack.mock.requests).toHaveLength(1)
  })
})

describe('client behaviour', () => {
  it('closes the upstream connection promptly when the client aborts mid-stream', async () => {
    const controller = new AbortController()
    const stream = anthropic.messages.stream(
      { model: 'claude-sonnet-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-mock-chunk-delay-ms': '100' }, signal: controller.signal },
    )
    for await (const event of stream) {
      if (event.type === 'content_block_start') break
    }
    controller.abort()
    await eventually(() => expect(stack.mock.requests[0]?.closedEarly).toBe(true), 1_000)
    await eventually(() => expect(requestLogs(stack).at(-1)).toMatchObject({ outcome: 'client_closed' }))
  })

  it('stops retrying when the client leaves during the backoff', async () => {
    const backoff = holdTimeouts(400)
    queue({ kind: 'status', status: 529, retryAfterMs: 400 })
    const controller = new AbortController()
    const pending = request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}',
      signal: controller.signal,
    }).catch(() => undefined)
    await backoff.started()
    controller.abort()
    await pending
    await vi.waitFor(() => expect(backoff.allCancelled()).toBe(true))
    // Had the backoff not been cancelled, its end would send a second attempt.
    backoff.release()
    await settle()
    expect(stack.mock.requests).toHaveLength(1)
    await eventually(() => expect(requestLogs(stack).at(-1)).toMatchObject({ outcome: 'client_closed' }))
  })
})

describe("the upstream's own request id", () => {
  it("reaches the log line from each provider's own header (the registry's requestIdHeader)", async () => {
    const before = requestLogs(stack).length
    await ask()
    const openai = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-x', maxRetries: 0 })
    const stream = await openai.chat.completions.create({
      model: 'gpt-5',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const chunks: unknown[] = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.length).toBeGreaterThan(0)
    await eventually(() => expect(requestLogs(stack)).toHaveLength(before + 2))
    const [messages, chat] = requestLogs(stack).slice(before)
    expect(messages).toMatchObject({ upstream: 'anthropic', upstreamRequestId: expect.stringMatching(/^req_mock_/) })
    expect(chat).toMatchObject({ upstream: 'openai', upstreamRequestId: expect.stringMatching(/^req_mock_/) })
  })
})
