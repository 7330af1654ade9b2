import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack.close())

async function post(path: string, body: string): Promise<string> {
  stack.mock.reset()
  const answer = await request(`${stack.proxyUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body,
  })
  await answer.body.arrayBuffer()
  const seen = stack.mock.requests.at(-1)
  if (!seen) throw new Error('the upstream saw no request')
  return seen.body
}

describe('OpenAI bodies ctxgate only adds a field to', () => {
  it('seed 9007199254740993 and 1e400 reach the upstream as written when ctxgate adds prompt_cache_key', async () => {
    const body = `{"model":"gpt-4o","seed":9007199254740993,"temperature":1e400,"messages":[{"role":"user","content":"hi"}]}`
    const sent = await post('/v1/chat/completions', body)
    expect(sent).toContain('"seed":9007199254740993')
    expect(sent).toContain('"temperature":1e400')
    expect(sent).toMatch(/^\{"prompt_cache_key":"[^"]+",/)
    expect(sent.slice(sent.indexOf(',') + 1)).toBe(body.slice(1))
  })

  it('keeps the Responses API body as written too', async () => {
    const body = `{"model":"gpt-4o","metadata":{"big":9007199254740993},"input":[{"role":"user","content":"hi"}]}`
    const sent = await post('/v1/responses', body)
    expect(sent).toContain('"big":9007199254740993')
    expect(sent.slice(sent.indexOf(',') + 1)).toBe(body.slice(1))
  })

  it('splices stream_options in as well when ctxgate asks a stream for usage', async () => {
    const body = `{"model":"gpt-4o","stream":true,"seed":9007199254740993,"messages":[{"role":"user","content":"hi"}]}`
    const sent = await post('/v1/chat/completions', body)
    expect(sent).toContain('"seed":9007199254740993')
    expect(sent).toContain('"stream_options":{"include_usage":true}')
    expect(sent.endsWith(body.slice(1))).toBe(true)
  })

  it('still answers the SDK as before', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${stack.proxyUrl}/v1`, maxRetries: 0 })
    const answer = await client.chat.completions.create({
      model: 'gpt-4o',
      seed: 7,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(answer.choices[0]?.message.content).toBeTypeOf('string')
  })
})

describe('POST /v1/responses/compact', () => {
  it('is forwarded as the client sent it: no prompt_cache_key, no edit', async () => {
    const body = `{"model":"gpt-5","input":[{"type":"compaction","encrypted_content":"enc:1"},{"role":"user","content":"hi"}]}`
    const sent = await post('/v1/responses/compact', body)
    expect(sent).toBe(body)
    expect(stack.mock.requests.at(-1)?.url).toBe('/v1/responses/compact')
  })
})
