import { spawn } from 'node:child_process'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'

let mock: MockServer
let anthropic: Anthropic
let openai: OpenAI

beforeAll(async () => {
  mock = await startMockServer()
  anthropic = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0 })
  openai = new OpenAI({ baseURL: `${mock.url}/v1`, apiKey: 'k', maxRetries: 0 })
})
afterAll(() => mock.close())

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await request(`${mock.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })
  return { status: response.statusCode, json: (await response.body.json()) as Record<string, unknown> }
}

describe('Messages requests the real API refuses', () => {
  it('answers 400 in the API error shape when max_tokens is missing or not a whole number', async () => {
    const missing = await post('/v1/messages', { model: 'm', messages: [{ role: 'user', content: 'hi' }] })
    expect(missing.status).toBe(400)
    expect(missing.json).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
      request_id: expect.stringMatching(/^req_/),
    })
    const fractional = await post('/v1/messages', { model: 'm', max_tokens: 1.5, messages: [] })
    expect(fractional.json).toMatchObject({ error: { message: 'max_tokens: Input should be a valid integer' } })
  })

  it('still counts tokens without max_tokens, as count_tokens takes none', async () => {
    const counted = await post('/v1/messages/count_tokens', { model: 'm', messages: [{ role: 'user', content: 'hi' }] })
    expect(counted.status).toBe(200)
    expect(counted.json['input_tokens']).toBeGreaterThan(0)
  })
})

describe('embeddings', () => {
  const norm = (vector: number[]): number => Math.hypot(...vector)

  it('gives each input a deterministic unit vector, decoded by the SDK from base64', async () => {
    const first = await openai.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] })
    const again = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'alpha' })
    expect(first.data.map((item) => item.index)).toEqual([0, 1])
    const [alpha, beta] = first.data.map((item) => item.embedding) as [number[], number[]]
    expect(alpha).toHaveLength(1_536)
    expect(norm(alpha)).toBeCloseTo(1, 5)
    expect(again.data[0]?.embedding).toEqual(alpha)
    expect(beta).not.toEqual(alpha)
    expect(first.usage.prompt_tokens).toBeGreaterThan(0)
    expect(first.usage.total_tokens).toBe(first.usage.prompt_tokens)
  })

  it('sends floats when asked, honours dimensions and model sizes, and counts token-array inputs by length', async () => {
    const floats = await openai.embeddings.create({ model: 'm', input: 'alpha', encoding_format: 'float' })
    const base64 = await openai.embeddings.create({ model: 'm', input: 'alpha' })
    expect(floats.data[0]?.embedding).toEqual(base64.data[0]?.embedding)
    const small = await openai.embeddings.create({ model: 'm', input: 'alpha', dimensions: 8 })
    expect(small.data[0]?.embedding).toHaveLength(8)
    const large = await openai.embeddings.create({ model: 'text-embedding-3-large', input: 'alpha' })
    expect(large.data[0]?.embedding).toHaveLength(3_072)
    const tokens = await openai.embeddings.create({ model: 'm', input: [[1, 2, 3], [4]] })
    expect(tokens.usage.prompt_tokens).toBe(4)
  })

  it('refuses a request without input in the OpenAI error shape', async () => {
    await expect(openai.embeddings.create({ model: 'm' } as never)).rejects.toMatchObject({
      status: 400,
      error: { message: "Missing required parameter: 'input'.", param: 'input', code: 'missing_required_parameter' },
    })
    await expect(openai.embeddings.create({ model: 'm', input: '' })).rejects.toMatchObject({ status: 400 })
  })
})

describe('models', () => {
  it("lists and retrieves models in each provider's shape", async () => {
    const anthropicModels = await anthropic.models.list()
    expect(anthropicModels.data.map((model) => model.id)).toContain('claude-sonnet-4-5')
    expect(await anthropic.models.retrieve('claude-sonnet-4-5')).toMatchObject({
      type: 'model',
      display_name: 'Claude Sonnet 4.5',
    })
    const openaiModels = await openai.models.list()
    expect(openaiModels.data.map((model) => model.id)).toContain('text-embedding-3-small')
    expect(await openai.models.retrieve('gpt-5')).toMatchObject({ id: 'gpt-5', object: 'model' })
  })

  it('answers 404 for a model it does not list', async () => {
    await expect(anthropic.models.retrieve('claude-nope')).rejects.toMatchObject({
      status: 404,
      error: { error: { type: 'not_found_error' } },
    })
    await expect(openai.models.retrieve('gpt-nope')).rejects.toMatchObject({ status: 404 })
  })
})

describe('ctxgate mock --agent-steps', () => {
  function run(args: string[]): { output: () => string; exited: Promise<number | null>; kill: () => void } {
    const child = spawn(process.execPath, ['dist/cli.js', 'mock', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let text = ''
    child.stdout.on('data', (data: Buffer) => (text += data.toString()))
    child.stderr.on('data', (data: Buffer) => (text += data.toString()))
    return {
      output: () => text,
      exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
      kill: () => child.kill('SIGTERM'),
    }
  }

  it('starts the loop from the command line and answers with a shell call', async () => {
    const server = run(['--port', '0', '--agent-steps', '3'])
    try {
      while (!/listening on (\S+)/.test(server.output())) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(server.output()).toContain('(agent loop: 3 tool calls per conversation)')
      const url = /listening on (\S+)/.exec(server.output())?.[1] as string
      const client = new Anthropic({ baseURL: url, apiKey: 'k', maxRetries: 0 })
      const message = await client.messages.create({
        model: 'm',
        max_tokens: 64,
        tools: [{ name: 'bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
        messages: [{ role: 'user', content: 'go' }],
      })
      expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'bash', input: { command: 'seq 1 4000' } })
    } finally {
      server.kill()
      await server.exited
    }
  })

  it('refuses a step count that is not a whole number, naming the flag', async () => {
    const server = run(['--port', '0', '--agent-steps', 'many'])
    expect(await server.exited).toBe(2)
    expect(server.output()).toContain('--agent-steps must be a whole number of at least 0, got "many"')
  })
})
