import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack

beforeAll(async () => {
  stack = await startStack({
    prepareFor: (format) =>
      format === 'anthropic-messages'
        ? () => Promise.reject(new Error('rewrite bug'))
        : async (body) => ({
            kind: 'forward',
            prepared: { body: Buffer.from(body.toString('utf8').replace('"PLACEHOLDER"', '"rewritten"')) },
          }),
  })
})
afterAll(() => stack.close())

describe('preparing a request', () => {
  it('forwards the original bytes when preparing throws, and counts it', async () => {
    const body = '{"model":"m", "max_tokens":1,"messages":[{"role":"user","content":"keep me"}]}'
    const answer = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    expect(answer.statusCode).toBe(200)
    await answer.body.dump()
    expect(stack.mock.requests.at(-1)?.body).toBe(body)
    await eventually(() => expect(requestLogs(stack).at(-1)).toMatchObject({ failOpen: 'prepare', status: 200 }))
    expect(await stack.app.registry.getSingleMetricAsString('ctxgate_fail_open_total')).toContain(
      'ctxgate_fail_open_total{provider="anthropic",stage="prepare"} 1',
    )
  })

  it('sends a prepared body with its own length', async () => {
    const answer = await request(`${stack.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"PLACEHOLDER","messages":[{"role":"user","content":"x"}]}',
    })
    await answer.body.dump()
    const seen = stack.mock.requests.at(-1)
    expect(seen?.body).toBe('{"model":"rewritten","messages":[{"role":"user","content":"x"}]}')
    expect(seen?.headers['content-length']).toBe(String(seen?.body.length))
  })
})
