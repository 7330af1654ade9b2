import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clearedNote } from '../../src/rewrite/notes.ts'
import { buildMessages, type Json, type Step } from '../helpers/conversations.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

const round = (size: number): Step => ({
  kind: 'round',
  calls: 2,
  sizes: [size, size, size],
  outputKind: 'json',
  thinking: false,
  extraField: false,
})

describe('rewriting through the proxy, with the official SDKs', () => {
  let stack: Stack
  beforeAll(async () => {
    // ctxgate and the fake upstream agree on a 20k window.
    stack = await startStack({
      mock: { window: 20_000 },
      config: {
        models: [{ match: '*', window: 20_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      },
    })
  })
  afterAll(() => stack.close())

  it('keeps a growing Anthropic conversation under the window: no refusals, streamed, usage read back', async () => {
    const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-rewrite', maxRetries: 0 })
    const all = buildMessages(Array.from({ length: 16 }, () => round(4_000)))
    for (let end = 3; end <= all.length; end += 2) {
      const stream = client.messages.stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 512,
        messages: all.slice(0, end) as unknown as Anthropic.MessageParam[],
      })
      const message = await stream.finalMessage()
      expect(
        message.usage.input_tokens +
          (message.usage.cache_read_input_tokens ?? 0) +
          (message.usage.cache_creation_input_tokens ?? 0),
      ).toBeLessThanOrEqual(20_000)
    }
    const lastSent = JSON.parse(stack.mock.requests.at(-1)?.body ?? '{}') as Json
    expect(JSON.stringify(lastSent)).toMatch(/\[ctxgate(: output cleared| folded)/)
    await eventually(() =>
      expect(requestLogs(stack).at(-1)).toMatchObject({
        status: 200,
        promptTokens: expect.any(Number),
        rewrite: { budget: expect.any(Number) },
      }),
    )
    expect(requestLogs(stack).every((line) => line['status'] === 200)).toBe(true)
  })

  it('rewrites OpenAI chat the same way', async () => {
    const client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-openai-rewrite', maxRetries: 0 })
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Go.' }]
    for (let index = 0; index < 12; index++) {
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${index}`, type: 'function', function: { name: 'cat', arguments: '{}' } }],
      })
      messages.push({
        role: 'tool',
        tool_call_id: `c${index}`,
        content: JSON.stringify({ index, rows: Array.from({ length: 120 }, (_, row) => ({ row, value: `v${row}` })) }),
      })
    }
    const completion = await client.chat.completions.create({ model: 'gpt-5', messages })
    expect(completion.usage?.prompt_tokens).toBeLessThanOrEqual(20_000)
    expect(stack.mock.requests.at(-1)?.body).toContain('prompt_cache_key')
  })
})

describe('when the upstream says the prompt is too long', () => {
  let stack: Stack
  beforeAll(async () => {
    // ctxgate believes in a 200k window; the upstream enforces 12k.
    stack = await startStack({ mock: { window: 12_000 } })
  })
  afterAll(() => stack.close())

  it('re-plans once with the limit it was told and sends the smaller request; the client sees one 200', async () => {
    const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-refit', maxRetries: 0 })
    const messages = buildMessages(
      Array.from({ length: 10 }, () => round(4_000)),
    ) as unknown as Anthropic.MessageParam[]
    const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages })
    expect(message.type).toBe('message')
    expect(stack.mock.requests).toHaveLength(2)
    expect(stack.mock.requests[1]?.body).toContain(clearedNote.slice(0, 40))
    await eventually(() => expect(requestLogs(stack).at(-1)).toMatchObject({ status: 200, refit: true, attempts: 2 }))
    // The limit is remembered: the next request fits at once.
    await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages })
    expect(stack.mock.requests).toHaveLength(3)
  })
})

describe('cache prefix breaks', () => {
  it('counts a ctxgate batch and a client rewrite of its own history apart', async () => {
    const stack = await startStack({
      mock: { window: 30_000 },
      config: {
        models: [{ match: '*', window: 30_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      },
    })
    try {
      const client = new Anthropic({
        baseURL: stack.proxyUrl,
        apiKey: 'sk-ant-breaks',
        maxRetries: 0,
        defaultHeaders: { 'x-ctxgate-session': 'breaks' },
      })
      const all = buildMessages(Array.from({ length: 16 }, () => round(4_000))) as unknown as Anthropic.MessageParam[]
      for (let end = 3; end <= all.length; end += 2)
        await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages: all.slice(0, end) })
      // The client compacts its own history: it now sends fewer messages than before.
      await client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        messages: [all[0] as Anthropic.MessageParam, ...all.slice(-4)],
      })
      const text = await (await fetchMetrics(stack)).text()
      expect(text).toMatch(/ctxgate_cache_prefix_breaks_total\{provider="anthropic",cause="ctxgate_batch"\} [1-9]/)
      expect(text).toMatch(/ctxgate_cache_prefix_breaks_total\{provider="anthropic",cause="client_edit"\} 1/)
      const session = JSON.parse(await (await fetchPath(stack, '/ctxgate/sessions/breaks')).text()) as {
        prefixBreaks: number
        tokensRemoved: number
      }
      expect(session.prefixBreaks).toBeGreaterThanOrEqual(2)
      expect(session.tokensRemoved).toBeGreaterThan(0)
    } finally {
      await stack.close()
    }
  })
})

async function fetchPath(stack: Stack, path: string) {
  return (await request(`${stack.proxyUrl}${path}`)).body
}

function fetchMetrics(stack: Stack) {
  return fetchPath(stack, '/metrics')
}
