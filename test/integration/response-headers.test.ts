import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildMessages, type Step } from '../helpers/conversations.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

const round = (size: number, calls = 2): Step => ({
  kind: 'round',
  calls,
  sizes: [size, size, size],
  outputKind: 'json',
  thinking: false,
  extraField: false,
})

/** ctxgate and the fake upstream agree on a 20k window, so a growing conversation needs batches. */
const smallWindow = {
  models: [{ match: '*', window: 20_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
}

const ownHeadersOf = (headers: Headers): Record<string, string> =>
  Object.fromEntries([...headers].filter(([name]) => name.startsWith('x-ctxgate-')))

const numberHeader = (headers: Headers, name: string): number => {
  const value = headers.get(name)
  expect(value, name).toMatch(/^\d+$/)
  return Number(value)
}

describe('response headers, off by default', () => {
  let stack: Stack
  let anthropic: Anthropic
  let openai: OpenAI
  beforeAll(async () => {
    stack = await startStack({ mock: { window: 20_000 }, config: smallWindow })
    anthropic = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-headers-0001', maxRetries: 0 })
    openai = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-openai-headers-0001', maxRetries: 0 })
  })
  afterAll(() => stack.close())

  it('adds none unless the request asks', async () => {
    const { response } = await anthropic.messages
      .create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse()
    expect(response.status).toBe(200)
    expect(ownHeadersOf(response.headers)).toEqual({})
  })

  it('describes a plain Anthropic request when it sends x-ctxgate-debug: 1', async () => {
    const { response } = await anthropic.messages
      .create(
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
        { headers: { 'x-ctxgate-debug': '1', 'x-ctxgate-session': 'task-7' } },
      )
      .withResponse()
    expect(ownHeadersOf(response.headers)).toMatchObject({
      'x-ctxgate-rewrite': 'rewritten',
      'x-ctxgate-session': 'task-7',
      'x-ctxgate-edit': 'none',
      'x-ctxgate-tokens-removed': '0',
    })
    const before = numberHeader(response.headers, 'x-ctxgate-estimate-before')
    expect(numberHeader(response.headers, 'x-ctxgate-estimate-after')).toBeGreaterThanOrEqual(before)
    // 90% of the 20k window (max_tokens fits in the rest).
    expect(numberHeader(response.headers, 'x-ctxgate-budget')).toBe(18_000)
  })

  it('puts them on the head of a streamed answer, whose bytes are unchanged', async () => {
    const { data: stream, response } = await anthropic.messages
      .create(
        { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Stream' }] },
        { headers: { 'x-ctxgate-debug': 'true' } },
      )
      .withResponse()
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(response.headers.get('x-ctxgate-rewrite')).toBe('rewritten')
    expect(response.headers.get('x-ctxgate-edit')).toBe('none')
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    expect(types[0]).toBe('message_start')
    expect(types.at(-1)).toBe('message_stop')
  })

  it('says why a request went on as sent', async () => {
    const { response } = await anthropic.messages
      .create(
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
        { headers: { 'x-ctxgate-debug': '1', 'x-ctxgate-mode': 'passthrough' } },
      )
      .withResponse()
    // Nothing was estimated, so no numbers and no session are claimed.
    expect(ownHeadersOf(response.headers)).toEqual({ 'x-ctxgate-rewrite': 'passthrough' })
    const models = await openai.models.list({ headers: { 'x-ctxgate-debug': '1' } }).asResponse()
    expect(ownHeadersOf(models.headers)).toEqual({ 'x-ctxgate-rewrite': 'not-a-chat-request' })
  })

  it('describes OpenAI Chat answers, plain and streamed, and Responses answers', async () => {
    const debug = { headers: { 'x-ctxgate-debug': 'on' } }
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello' }]
    const plain = await openai.chat.completions.create({ model: 'gpt-5', messages }, debug).withResponse()
    expect(plain.data.choices[0]?.message.role).toBe('assistant')
    expect(plain.response.headers.get('x-ctxgate-rewrite')).toBe('rewritten')
    expect(plain.response.headers.get('x-ctxgate-edit')).toBe('none')
    const streamed = await openai.chat.completions
      .create({ model: 'gpt-5', messages, stream: true }, debug)
      .withResponse()
    let chunks = 0
    for await (const chunk of streamed.data) chunks += chunk.choices.length
    expect(chunks).toBeGreaterThan(0)
    expect(streamed.response.headers.get('x-ctxgate-rewrite')).toBe('rewritten')
    const responses = await openai.responses
      .create({ model: 'gpt-5', input: [{ role: 'user', content: 'Hello' }] }, debug)
      .withResponse()
    expect(responses.data.status).toBe('completed')
    expect(responses.response.headers.get('x-ctxgate-rewrite')).toBe('rewritten')
    expect(responses.response.headers.get('x-ctxgate-budget')).toMatch(/^\d+$/)
  })

  it('follows a growing conversation: none, then a batch, then the batch re-applied', async () => {
    const all = buildMessages(Array.from({ length: 16 }, () => round(4_000))) as unknown as Anthropic.MessageParam[]
    const edits: string[] = []
    for (let end = 3; end <= all.length; end += 2) {
      const { response } = await anthropic.messages
        .create(
          { model: 'claude-sonnet-4-5', max_tokens: 256, messages: all.slice(0, end) },
          { headers: { 'x-ctxgate-debug': '1', 'x-ctxgate-session': 'growing' } },
        )
        .withResponse()
      const edit = response.headers.get('x-ctxgate-edit') ?? 'missing'
      edits.push(edit)
      const removed = numberHeader(response.headers, 'x-ctxgate-tokens-removed')
      expect(removed > 0, `${edit} removed ${removed}`).toBe(edit !== 'none')
      expect(numberHeader(response.headers, 'x-ctxgate-estimate-after')).toBeLessThanOrEqual(
        numberHeader(response.headers, 'x-ctxgate-budget'),
      )
      if (edit !== 'none')
        expect(numberHeader(response.headers, 'x-ctxgate-estimate-before')).toBeGreaterThan(
          numberHeader(response.headers, 'x-ctxgate-estimate-after'),
        )
    }
    expect(edits[0]).toBe('none')
    const firstBatch = edits.indexOf('batch')
    expect(firstBatch).toBeGreaterThan(0)
    expect(edits.slice(firstBatch + 1)).toContain('reapplied')
    expect(edits.every((edit) => ['none', 'batch', 'reapplied'].includes(edit))).toBe(true)
  })

  it('describes its own refusal of a request that cannot fit', async () => {
    const messages = buildMessages([round(500), round(60_000, 1)]) as unknown as Anthropic.MessageParam[]
    const failed = await anthropic.messages
      .create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages }, { headers: { 'x-ctxgate-debug': '1' } })
      .catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(Anthropic.BadRequestError)
    const headers = (failed as InstanceType<typeof Anthropic.BadRequestError>).headers
    expect(headers.get('x-ctxgate-error-code')).toBe('CTXGATE_CONTEXT_TOO_LONG')
    expect(headers.get('x-ctxgate-rewrite')).toBe('refused')
    expect(numberHeader(headers, 'x-ctxgate-estimate-after')).toBeGreaterThan(numberHeader(headers, 'x-ctxgate-budget'))
  })

  it('keeps x-should-retry: false beside them when ctxgate used all its attempts', async () => {
    const failed = await anthropic.messages
      .create(
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
        { headers: { 'x-ctxgate-debug': '1', 'x-mock-fault': '{"kind":"status","status":529}' } },
      )
      .catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(Anthropic.APIError)
    const headers = (failed as InstanceType<typeof Anthropic.APIError>).headers
    expect(headers?.get('x-should-retry')).toBe('false')
    expect(headers?.get('x-ctxgate-rewrite')).toBe('rewritten')
  })

  it('names a metadata.user_id session by its digest, never by the value (which may not even be printable)', async () => {
    const { response } = await anthropic.messages
      .create(
        {
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          metadata: { user_id: 'Zoë Ünal\nline two' },
          messages: [{ role: 'user', content: 'Hi' }],
        },
        { headers: { 'x-ctxgate-debug': '1' } },
      )
      .withResponse()
    expect(response.status).toBe(200)
    expect(response.headers.get('x-ctxgate-session')).toMatch(/^u-[0-9a-f]{16}$/)
  })

  it('answers each client for itself: one asking does not change what another gets', async () => {
    const ask = (debug: boolean) =>
      anthropic.messages
        .create(
          { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: `debug ${debug}` }] },
          debug ? { headers: { 'x-ctxgate-debug': '1' } } : {},
        )
        .withResponse()
    const answers = await Promise.all([ask(true), ask(false), ask(true), ask(false)])
    expect(answers.map(({ response }) => response.headers.has('x-ctxgate-rewrite'))).toEqual([true, false, true, false])
    // The debug header itself is ctxgate's: it never reaches the upstream.
    expect(stack.mock.requests.every((seen) => seen.headers['x-ctxgate-debug'] === undefined)).toBe(true)
  })
})

describe('response headers turned on in the configuration', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({
      mock: { window: 12_000 },
      config: {
        server: { responseHeaders: true },
        metrics: { token: 'admin-token-0123456789' },
        auth: { tokens: ['client-token-0123456789'] },
      },
    })
  })
  afterAll(() => stack.close())

  const client = (headers: Record<string, string> = {}) =>
    new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-config-0001',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-auth': 'client-token-0123456789', ...headers },
    })

  it('describes every answer, with neither the API key nor the client token in any header', async () => {
    const { response } = await client({ 'x-ctxgate-session': 'run-1' })
      .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse()
    const own = ownHeadersOf(response.headers)
    expect(own['x-ctxgate-rewrite']).toBe('rewritten')
    // Under client authentication the session is named as the log line names it: the tenant's hash, then the id.
    expect(own['x-ctxgate-session']).toMatch(/^[0-9a-f]{16}:run-1$/)
    const everything = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n')
    expect(everything).not.toContain('sk-ant-config-0001')
    expect(everything).not.toContain('client-token-0123456789')
  })

  it('leaves them off for a request that sends x-ctxgate-debug: 0', async () => {
    const { response } = await client({ 'x-ctxgate-debug': '0' })
      .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse()
    expect(ownHeadersOf(response.headers)).toEqual({})
  })

  it('says refit when the upstream refused the first request for its length', async () => {
    // ctxgate believes in a 200k window; the upstream enforces 12k.
    const messages = buildMessages(
      Array.from({ length: 10 }, () => round(4_000)),
    ) as unknown as Anthropic.MessageParam[]
    const { response } = await client()
      .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages })
      .withResponse()
    expect(response.status).toBe(200)
    expect(response.headers.get('x-ctxgate-edit')).toBe('refit')
    expect(numberHeader(response.headers, 'x-ctxgate-tokens-removed')).toBeGreaterThan(0)
    expect(stack.mock.requests.length).toBeGreaterThanOrEqual(2)
  })
})

describe('response headers when preparing a request fails', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ prepareFor: () => () => Promise.reject(new Error('rewrite bug')) })
  })
  afterAll(() => stack.close())

  it('says the request went on unchanged, and the answer is the upstream one', async () => {
    const anthropic = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-failopen-0001', maxRetries: 0 })
    const { data, response } = await anthropic.messages
      .create(
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
        { headers: { 'x-ctxgate-debug': '1' } },
      )
      .withResponse()
    expect(data.type).toBe('message')
    expect(ownHeadersOf(response.headers)).toEqual({ 'x-ctxgate-rewrite': 'failed-open' })
  })
})
