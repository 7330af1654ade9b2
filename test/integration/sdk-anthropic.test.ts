import Anthropic from '@anthropic-ai/sdk'
import { beforeEach, describe, expect, it } from 'vitest'
import { useAnthropicStack } from '../helpers/anthropic-stack.ts'

const anthropic = useAnthropicStack()
beforeEach(() => anthropic.stack.mock.reset())

const tools: Anthropic.Tool[] = [
  {
    name: 'read_file',
    description: 'Read a file',
    input_schema: { type: 'object', properties: { path: { type: 'string' } } },
  },
]

describe('Anthropic SDK through ctxgate', () => {
  it('creates a message and returns the upstream usage untouched', async () => {
    const message = await anthropic.client.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello there' }],
    })
    expect(message.content[0]).toMatchObject({ type: 'text' })
    expect(message.usage.input_tokens).toBeGreaterThan(0)
    expect(anthropic.stack.mock.requests).toHaveLength(1)
    // SDK 1.x sends the key as a bearer token; 0.x as x-api-key. Either way it arrives unchanged.
    const seen = anthropic.stack.mock.requests[0]?.headers
    expect(seen?.['x-api-key'] ?? seen?.['authorization']).toMatch(/sk-ant-test-key-0001$/)
    expect(seen?.['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })

  it('streams a message event by event', async () => {
    const stream = anthropic.client.messages.stream({
      model: 'claude-sonnet-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Stream please' }],
    })
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    const final = await stream.finalMessage()
    expect(types[0]).toBe('message_start')
    expect(types.at(-1)).toBe('message_stop')
    expect(final.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('mock upstream') })
    expect(final.usage.output_tokens).toBeGreaterThan(1)
  })

  it('round-trips a tool call and its result', async () => {
    const first = await anthropic.client.messages.create(
      { model: 'claude-sonnet-5', max_tokens: 64, tools, messages: [{ role: 'user', content: 'Read README.md' }] },
      { headers: { 'x-mock-reply': 'tool_use' } },
    )
    const call = first.content.find((block) => block.type === 'tool_use')
    expect(call).toBeDefined()
    const second = await anthropic.client.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 64,
      tools,
      messages: [
        { role: 'user', content: 'Read README.md' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: call?.type === 'tool_use' ? call.id : '', content: '# ctxgate' },
          ],
        },
      ],
    })
    expect(second.stop_reason).toBe('end_turn')
  })

  it('passes the upstream 400 through when a tool result has no call', async () => {
    const attempt = anthropic.client.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_missing', content: 'x' }] }],
    })
    await expect(attempt).rejects.toMatchObject({
      status: 400,
      error: { error: { type: 'invalid_request_error', message: expect.stringContaining('unexpected `tool_use_id`') } },
    })
    expect(anthropic.stack.mock.requests).toHaveLength(1)
  })

  it('counts tokens', async () => {
    const counted = await anthropic.client.messages.countTokens({
      model: 'claude-sonnet-5',
      messages: [{ role: 'user', content: 'How many tokens is this?' }],
    })
    expect(counted.input_tokens).toBeGreaterThan(5)
  })

  it('keeps the beta header of beta calls', async () => {
    await anthropic.client.beta.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 16,
      betas: ['context-management-2025-06-27'],
      messages: [{ role: 'user', content: 'beta' }],
    })
    expect(anthropic.stack.mock.requests[0]?.url).toMatch(/^\/v1\/messages(\?beta=true)?$/)
    expect(anthropic.stack.mock.requests[0]?.headers['anthropic-beta']).toBe('context-management-2025-06-27')
  })

  it('reports cache writes then reads for a repeated prefix with a breakpoint', async () => {
    const system: Anthropic.TextBlockParam[] = [
      { type: 'text', text: 'You are a careful engineer. '.repeat(400), cache_control: { type: 'ephemeral' } },
    ]
    const ask = () =>
      anthropic.client.messages.create({
        model: 'claude-sonnet-5',
        max_tokens: 16,
        system,
        messages: [{ role: 'user', content: 'Go' }],
      })
    const first = await ask()
    const second = await ask()
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(1000)
    expect(first.usage.cache_read_input_tokens).toBe(0)
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens)
    expect(second.usage.cache_creation_input_tokens).toBe(0)
  })

  it('lists models on a passthrough route', async () => {
    const page = await anthropic.client.models.list()
    expect(page.data[0]?.id).toBe('claude-mock-1')
  })
})
