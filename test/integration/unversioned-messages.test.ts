import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack.close())

// opencode's Anthropic provider posts to `${baseURL}/messages`: a base URL without /v1 must work
// as it does for /chat/completions and /responses.
describe('POST /messages without /v1', () => {
  it('is a model call like /v1/messages: forwarded to /v1/messages and answered', async () => {
    const response = await request(`${stack.proxyUrl}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'k' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(response.statusCode).toBe(200)
    expect(await response.body.json()).toMatchObject({ type: 'message', role: 'assistant' })
    expect(stack.mock.requests.at(-1)?.url).toBe('/v1/messages')
    const counted = await request(`${stack.proxyUrl}/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'k' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(counted.statusCode).toBe(200)
    expect(stack.mock.requests.at(-1)?.url).toBe('/v1/messages/count_tokens')
  })
})
