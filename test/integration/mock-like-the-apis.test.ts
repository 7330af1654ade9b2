import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'

let mock: MockServer
let anthropic: Anthropic
let openai: OpenAI
const window = 8_000
const prompt = 'word '.repeat(1_000)

beforeAll(async () => {
  mock = await startMockServer({ window })
  anthropic = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0 })
  openai = new OpenAI({ baseURL: `${mock.url}/v1`, apiKey: 'k', maxRetries: 0 })
})
afterAll(() => mock.close())

describe('the prompt and max_tokens share the window, refused in each API’s words', () => {
  it('Messages: answers when both fit, refuses with the exceed-context-limit message when they do not', async () => {
    const fits = await anthropic.messages.create({
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: prompt }],
    })
    const promptTokens = fits.usage.input_tokens
    await expect(
      anthropic.messages.create({
        model: 'm',
        max_tokens: window - promptTokens + 1,
        messages: [{ role: 'user', content: prompt }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      error: {
        error: {
          type: 'invalid_request_error',
          message: `input length and \`max_tokens\` exceed context limit: ${promptTokens} + ${window - promptTokens + 1} > ${window}, decrease input length or \`max_tokens\` and try again`,
        },
      },
    })
    // count_tokens asks nothing of the reply.
    const counted = await anthropic.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: prompt }] })
    expect(counted.input_tokens).toBe(promptTokens)
  })

  it('Chat Completions: the completion counts toward the maximum context length', async () => {
    const fits = await openai.chat.completions.create({
      model: 'g',
      max_tokens: 10,
      messages: [{ role: 'user', content: prompt }],
    })
    const promptTokens = fits.usage?.prompt_tokens ?? 0
    await expect(
      openai.chat.completions.create({
        model: 'g',
        max_completion_tokens: window,
        messages: [{ role: 'user', content: prompt }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
      message: expect.stringContaining(
        `However, you requested ${promptTokens + window} tokens (${promptTokens} in the messages, ${window} in the completion)`,
      ),
    })
  })

  it('Responses: max_output_tokens counts too, and answered turns reach the usage ledger', async () => {
    mock.reset()
    const answered = await openai.responses.create({ model: 'g', input: prompt, max_output_tokens: 100 })
    await expect(
      openai.responses.create({ model: 'g', input: prompt, max_output_tokens: window }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    })
    const totals = (await (await request(`${mock.url}/_mock/usage`)).body.json()) as Record<string, number>
    expect(totals['requests']).toBe(1)
    expect((totals['inputTokens'] ?? 0) + (totals['cacheReadTokens'] ?? 0)).toBe(answered.usage?.input_tokens)
    expect(totals['outputTokens']).toBe(answered.usage?.output_tokens)
  })
})

describe('the mock as a process', () => {
  it('answers /healthz like ctxgate does, outside the request log', async () => {
    mock.reset()
    const response = await request(`${mock.url}/healthz`)
    expect(response.statusCode).toBe(200)
    expect(await response.body.json()).toEqual({ status: 'ok' })
    expect(mock.requests).toHaveLength(0)
  })

  it('says in one line that its port is taken, without a stack trace', async () => {
    const holder = createServer().listen(0, '127.0.0.1')
    await new Promise((resolve) => holder.once('listening', resolve))
    const { port } = holder.address() as { port: number }
    const child = spawn(process.execPath, ['dist/cli.js', 'mock', '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()))
    const code = await new Promise((resolve) => child.on('exit', resolve))
    holder.close()
    expect(code).toBe(1)
    expect(stderr).toBe(`ctxgate: port 127.0.0.1:${port} is already in use; pass --port to another port\n`)
  })
})
