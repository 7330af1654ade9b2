import fc from 'fast-check'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestLogs, startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack

beforeAll(async () => {
  stack = await startStack({
    config: {
      server: { bodyLimitBytes: 256 * 1024 },
      models: [{ match: '*', window: 4_000, budget: 0.9, minCacheableTokens: 100, thinkingBoundToPrefix: false }],
    },
  })
})
afterAll(() => stack.close())

const role = fc.oneof(
  fc.constantFrom('user', 'assistant', 'system', 'tool', 'developer', 'function'),
  fc.string({ maxLength: 8 }),
)
const block = fc.oneof(
  fc.record(
    {
      type: fc.constantFrom('text', 'tool_use', 'tool_result', 'thinking', 'image', 'weird'),
      text: fc.oneof(fc.string(), fc.integer()),
      id: fc.string({ maxLength: 6 }),
      tool_use_id: fc.string({ maxLength: 6 }),
      content: fc.oneof(fc.string(), fc.array(fc.anything(), { maxLength: 3 })),
    },
    { requiredKeys: ['type'] },
  ),
  fc.anything(),
)
const message = fc.record(
  {
    role,
    content: fc.oneof(fc.string(), fc.array(block, { maxLength: 4 }), fc.anything()),
    tool_calls: fc.array(
      fc.record({
        id: fc.string({ maxLength: 6 }),
        type: fc.constant('function'),
        function: fc.record({ name: fc.string({ maxLength: 6 }), arguments: fc.string() }),
      }),
      { maxLength: 2 },
    ),
    tool_call_id: fc.string({ maxLength: 6 }),
  },
  { requiredKeys: ['role'] },
)
const chatBody = fc.record(
  {
    model: fc.oneof(fc.constantFrom('claude-sonnet-4-5', 'gpt-5'), fc.string(), fc.integer(), fc.constant(null)),
    max_tokens: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
    stream: fc.boolean(),
    system: fc.oneof(fc.string(), fc.array(block, { maxLength: 2 })),
    messages: fc.oneof(fc.array(message, { maxLength: 12 }), fc.anything()),
    input: fc.oneof(fc.string(), fc.array(fc.anything(), { maxLength: 4 })),
  },
  { requiredKeys: [] },
)
const bodyBytes = fc.oneof(
  chatBody.map((value) => Buffer.from(JSON.stringify(value))),
  fc.json().map((text) => Buffer.from(text)),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.integer({ min: 1, max: 2_000 }).map((depth) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`)),
  fc.constant(Buffer.alloc(0)),
)
const contentType = fc.constantFrom(
  'application/json',
  'text/plain',
  'application/json; charset=latin1',
  'multipart/form-data; boundary=x',
  undefined,
)
const path = fc.constantFrom(
  '/v1/messages',
  '/v1/messages?beta=true',
  '/v1/chat/completions',
  '/chat/completions',
  '/v1/responses',
  '/v1/messages/count_tokens',
)

describe('bad input', () => {
  it('never gets a 5xx from ctxgate itself, whatever the body and headers', async () => {
    await fc.assert(
      fc.asyncProperty(bodyBytes, contentType, path, fc.boolean(), async (bytes, type, route, passthrough) => {
        const headers: Record<string, string> = { 'anthropic-version': '2023-06-01' }
        if (type) headers['content-type'] = type
        if (passthrough) headers['x-ctxgate-mode'] = 'passthrough'
        const answer = await request(`${stack.proxyUrl}${route}`, { method: 'POST', headers, body: bytes })
        const text = await answer.body.text()
        if (answer.statusCode >= 500) expect(answer.headers['x-ctxgate-error-code'], text).toBeUndefined()
        if (answer.headers['x-ctxgate-error-code'] !== undefined)
          expect(['CTXGATE_CONTEXT_TOO_LONG', 'CTXGATE_REQUEST_TOO_LARGE', 'CTXGATE_INVALID_REQUEST']).toContain(
            answer.headers['x-ctxgate-error-code'],
          )
      }),
      { numRuns: 250 },
    )
    expect((await request(`${stack.proxyUrl}/healthz`)).statusCode).toBe(200)
  })

  it('handles the classic hard cases: deep nesting, a 5 MB tool result, 10,000 messages, invalid UTF-8, orphan and duplicate ids', async () => {
    const big = await startStack({ config: { server: { bodyLimitBytes: 32 * 1024 * 1024 } } })
    try {
      const cases: Buffer[] = [
        Buffer.from(
          `{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":${'['.repeat(100_000)}1${']'.repeat(100_000)}}]}]}`,
        ),
        Buffer.from(
          JSON.stringify({
            model: 'claude-sonnet-4-5',
            max_tokens: 8,
            messages: [
              { role: 'user', content: 'go' },
              { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'cat', input: {} }] },
              {
                role: 'user',
                content: [{ type: 'tool_result', tool_use_id: 't', content: 'x'.repeat(5 * 1024 * 1024) }],
              },
            ],
          }),
        ),
        Buffer.from(
          JSON.stringify({
            model: 'claude-sonnet-4-5',
            max_tokens: 8,
            messages: Array.from({ length: 10_000 }, (_, index) => ({
              role: index % 2 === 0 ? 'user' : 'assistant',
              content: `message ${index}`,
            })),
          }),
        ),
        Buffer.concat([
          Buffer.from('{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"'),
          Buffer.from([0xc3, 0x28, 0xff]),
          Buffer.from('"}]}'),
        ]),
        Buffer.from(
          JSON.stringify({
            model: 'claude-sonnet-4-5',
            max_tokens: 8,
            messages: [
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nobody', content: 'x' }] },
              {
                role: 'assistant',
                content: [
                  { type: 'tool_use', id: 'dup', name: 'a', input: {} },
                  { type: 'tool_use', id: 'dup', name: 'b', input: {} },
                ],
              },
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'dup', content: 'y' }] },
            ],
          }),
        ),
      ]
      for (const bytes of cases) {
        big.mock.reset()
        const answer = await request(`${big.proxyUrl}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: bytes,
        })
        await answer.body.dump()
        expect(answer.statusCode).toBeLessThan(500)
        // The 5 MB result alone is over a 200k window: ctxgate says so itself, in the provider's shape.
        expect([undefined, 'CTXGATE_CONTEXT_TOO_LONG']).toContain(answer.headers['x-ctxgate-error-code'])
      }
      // Invalid UTF-8 is not parsed and re-serialized (that would turn it into U+FFFD): it goes out as sent.
      expect(requestLogs(big).map((line) => line['rewrite'])).toContain('invalid-utf8')
    } finally {
      await big.close()
    }
  })
})
