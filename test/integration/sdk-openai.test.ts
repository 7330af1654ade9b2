import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
let client: OpenAI
let bareClient: OpenAI

beforeAll(async () => {
  stack = await startStack()
  client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-openai-test-key-0002', maxRetries: 0 })
  bareClient = new OpenAI({ baseURL: stack.proxyUrl, apiKey: 'sk-openai-test-key-0002', maxRetries: 0 })
})
afterAll(() => stack.close())
beforeEach(() => stack.mock.reset())

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'run_shell',
      description: 'Run a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
    },
  },
]

describe('OpenAI SDK through ctxgate', () => {
  it('completes a chat with OPENAI_BASE_URL ending in /v1', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-5',
      messages: [{ role: 'user', content: 'Hello' }],
    })
    expect(completion.choices[0]?.message.content).toContain('mock upstream')
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0)
    expect(stack.mock.requests[0]?.url).toBe('/v1/chat/completions')
    expect(stack.mock.requests[0]?.headers['authorization']).toBe('Bearer sk-openai-test-key-0002')
  })

  it('completes a chat with a base URL without /v1 (ctxgate adds it upstream)', async () => {
    await bareClient.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'Hello' }] })
    expect(stack.mock.requests[0]?.url).toBe('/v1/chat/completions')
  })

  it('streams a chat completion with usage when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-5',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Stream' }],
    })
    let text = ''
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      if (chunk.usage) usage = chunk.usage
    }
    expect(text).toContain('mock upstream')
    expect(usage?.completion_tokens).toBeGreaterThan(0)
  })

  it('assembles a streamed chat with the chat.completions.stream() helper', async () => {
    const completion = await client.chat.completions
      .stream({ model: 'gpt-5', messages: [{ role: 'user', content: 'Stream with the helper' }] })
      .finalChatCompletion()
    expect(completion.choices[0]?.message.content).toContain('mock upstream')
    expect(completion.choices[0]?.finish_reason).toBe('stop')
  })

  it('round-trips tool calls', async () => {
    const first = await client.chat.completions.create(
      { model: 'gpt-5', tools, messages: [{ role: 'user', content: 'List files' }] },
      { headers: { 'x-mock-reply': 'tool_use' } },
    )
    const message = first.choices[0]?.message
    const call = message?.tool_calls?.[0]
    expect(call?.type).toBe('function')
    const second = await client.chat.completions.create({
      model: 'gpt-5',
      tools,
      messages: [
        { role: 'user', content: 'List files' },
        message as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call?.id ?? '', content: 'README.md\nsrc' },
      ],
    })
    expect(second.choices[0]?.finish_reason).toBe('stop')
  })

  it('reports automatic prefix caching on a repeated long prompt', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Follow the house style. '.repeat(600) },
      { role: 'user', content: 'Go' },
    ]
    await client.chat.completions.create({ model: 'gpt-5', messages })
    const second = await client.chat.completions.create({ model: 'gpt-5', messages })
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(1024)
  })

  it('creates a response on the Responses API, JSON and streamed', async () => {
    const response = await client.responses.create({ model: 'gpt-5', input: 'Say hi' })
    expect(response.output_text).toContain('mock upstream')
    const stream = await bareClient.responses.create({ model: 'gpt-5', input: 'Say hi', stream: true })
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ])
    expect(types).toContain('response.output_text.delta')
    expect(types.at(-1)).toBe('response.completed')
    expect(stack.mock.requests.map((request) => request.url)).toEqual(['/v1/responses', '/v1/responses'])
  })

  it('lists models on a passthrough route', async () => {
    const models = await client.models.list()
    expect(models.data[0]?.id).toBe('gpt-mock-1')
  })
})
