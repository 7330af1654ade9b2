import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack.close())

async function post(path: string, body: string, headers: Record<string, string>): Promise<string> {
  stack.mock.reset()
  const answer = await request(`${stack.proxyUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  })
  await answer.body.arrayBuffer()
  const seen = stack.mock.requests.at(-1)
  if (!seen) throw new Error('the upstream saw no request')
  return seen.body
}

const risky =
  '{"id":9007199254740993,"huge":1e400,"tiny":-1e-400,"long":0.12345678901234567890,"note":"1e400 stays a string"}'

describe('numbers in a body ctxgate rewrites', () => {
  it('keeps literals a double cannot hold when it adds a cache breakpoint to a Messages request', async () => {
    const body = `{"model":"claude-sonnet-4-5","max_tokens":64,"system":"${'You are careful. '.repeat(600)}","messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"probe","input":${risky}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`
    const sent = await post('/v1/messages', body, { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' })
    expect(sent).toContain('cache_control')
    expect(sent).toContain(`"input":${risky}`)
  })

  it('does not re-serialize a Messages body it only adds breakpoints to: the upstream gets the client’s bytes plus the cache_control fields', async () => {
    // 1.0, 1E5, an escaped é and a duplicate key: all of them a JSON round trip would rewrite.
    const input = '{"ratio": 1.0, "limit": 1E5, "city": "Caf\\u00e9", "mode": "a", "mode": "b"}'
    const body = `{"model":"claude-sonnet-4-5","max_tokens":64,\n "system":[{"type":"text","text":"${'You are careful. '.repeat(600)}"}],\n "messages":[{"role":"user","content":[{"type":"text","text":"go \\u2014 now"}]},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"probe","input":${input}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`
    const sent = await post('/v1/messages', body, { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' })
    expect(sent).toContain('cache_control')
    expect(sent.replaceAll(',"cache_control":{"type":"ephemeral"}', '')).toBe(body)
  })

  it('keeps them in an OpenAI Chat request whose old tool output ctxgate cleared', async () => {
    const rounds = Array.from({ length: 6 }, (_, index) => [
      `{"role":"assistant","content":null,"tool_calls":[{"id":"call_${index}","type":"function","function":{"name":"read","arguments":"{}"}}]}`,
      `{"role":"tool","tool_call_id":"call_${index}","content":"${'log line with numbers 12345 '.repeat(400)}"}`,
    ]).flat()
    const body = `{"model":"gpt-4o","seed":9007199254740993,"metadata":${risky},"messages":[{"role":"user","content":"go"},${rounds.join(',')}]}`
    const sent = await post('/v1/chat/completions', body, {
      authorization: 'Bearer sk-test',
      'x-ctxgate-budget': '6000',
    })
    // The body was really edited (a result cleared), so it went through a full serialization.
    expect(sent.length).toBeLessThan(body.length)
    expect(sent).toContain('"seed":9007199254740993')
    expect(sent).toContain(`"metadata":${risky}`)
  })
})
