import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'

let mock: MockServer
let anthropic: Anthropic
let openai: OpenAI

beforeAll(async () => {
  mock = await startMockServer({ window: 5_000 })
  anthropic = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0 })
  openai = new OpenAI({ baseURL: `${mock.url}/v1`, apiKey: 'k', maxRetries: 0 })
})
afterAll(() => mock.close())

const text = (value: string, cache = false): Anthropic.TextBlockParam => ({
  type: 'text',
  text: value,
  ...(cache ? { cache_control: { type: 'ephemeral' as const } } : {}),
})

describe('the fake upstream rejects what the real APIs reject', () => {
  it('refuses more than 4 cache breakpoints with the API message', async () => {
    const attempt = anthropic.messages.create({
      model: 'm',
      max_tokens: 1,
      system: [text('a', true), text('b', true), text('c', true)],
      messages: [{ role: 'user', content: [text('d', true), text('e', true)] }],
    })
    await expect(attempt).rejects.toMatchObject({
      status: 400,
      error: { error: { message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' } },
    })
  })

  it('refuses a 1h breakpoint after a 5m one', async () => {
    const attempt = anthropic.messages.create({
      model: 'm',
      max_tokens: 1,
      system: [text('a', true)],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'b', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
      ],
    })
    await expect(attempt).rejects.toMatchObject({
      status: 400,
      error: { error: { message: expect.stringContaining("a ttl='1h' cache_control block must not come after") } },
    })
  })

  it('refuses a tool call without its result', async () => {
    const attempt = anthropic.messages.create({
      model: 'm',
      max_tokens: 1,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 't', input: {} }] },
        { role: 'user', content: 'no result here' },
      ],
    })
    await expect(attempt).rejects.toMatchObject({
      status: 400,
      error: {
        error: {
          message: expect.stringMatching(
            /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/,
          ),
        },
      },
    })
  })

  it('refuses a prompt over the window with the real wording', async () => {
    const attempt = anthropic.messages.create({
      model: 'm',
      max_tokens: 1,
      messages: [{ role: 'user', content: 'word '.repeat(6_000) }],
    })
    await expect(attempt).rejects.toMatchObject({
      status: 400,
      error: { error: { message: expect.stringMatching(/^prompt is too long: \d+ tokens > 5000 maximum$/) } },
    })
    const chat = openai.chat.completions.create({
      model: 'g',
      messages: [{ role: 'user', content: 'word '.repeat(6_000) }],
    })
    await expect(chat).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded' })
  })

  it('refuses OpenAI tool messages that answer nothing, and calls left unanswered', async () => {
    await expect(
      openai.chat.completions.create({
        model: 'g',
        messages: [{ role: 'tool', tool_call_id: 'call_x', content: 'r' }],
      }),
    ).rejects.toMatchObject({ status: 400 })
    const unanswered = openai.chat.completions.create({
      model: 'g',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 't', arguments: '{}' } }],
        },
        { role: 'user', content: 'next' },
      ],
    })
    await expect(unanswered).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('did not have response messages: call_1'),
    })
  })

  it('counts tokens without caching and without a window check', async () => {
    const counted = await anthropic.messages.countTokens({
      model: 'm',
      messages: [{ role: 'user', content: 'word '.repeat(6_000) }],
    })
    expect(counted.input_tokens).toBeGreaterThan(5_000)
  })
})
