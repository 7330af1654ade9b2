import { connect } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

/** Sends hand-written bytes and returns everything the server answers until it closes. */
function raw(stack: Stack, text: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(stack.proxyUrl).port), '127.0.0.1', () => socket.write(text))
    let answer = ''
    socket.setTimeout(3_000, () => socket.end())
    socket.on('data', (data) => (answer += data.toString()))
    socket.on('end', () => resolve(answer))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

const adminToken = 'admin-token-0123456789abcdef'
const clientToken = 'client-token-0123456789abcdef'
let stack: Stack

beforeAll(async () => {
  stack = await startStack({
    config: { metrics: { token: adminToken }, auth: { tokens: [clientToken, 'another-client-token-000000'] } },
  })
})
afterAll(() => stack.close())

const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })

describe('upstream origins come from configuration only', () => {
  it('ignores the Host header and keeps traversal and authority-looking paths on the configured upstream', async () => {
    stack.mock.reset()
    const answers = [
      await raw(
        stack,
        `GET /_mock/echo/a HTTP/1.1\r\nHost: evil.example\r\nanthropic-version: 2023-06-01\r\nx-ctxgate-auth: ${clientToken}\r\nConnection: close\r\n\r\n`,
      ),
      await raw(
        stack,
        `GET /../../_mock/echo/b HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\nx-ctxgate-auth: ${clientToken}\r\nConnection: close\r\n\r\n`,
      ),
      await raw(
        stack,
        `GET //evil.example/_mock/echo/c HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\nx-ctxgate-auth: ${clientToken}\r\nConnection: close\r\n\r\n`,
      ),
    ]
    expect(answers[0]).toMatch(/^HTTP\/1\.1 (200|404)/)
    // Dot-segments are refused before anything goes upstream (an upstream that normalises would leave the base path).
    expect(answers[1]).toMatch(/^HTTP\/1\.1 400[^]*x-ctxgate-error-code: CTXGATE_INVALID_REQUEST/)
    expect(answers[2]).toMatch(/^HTTP\/1\.1 (200|404)/)
    // Every request that went anywhere went to the fake upstream, with its own Host.
    expect(stack.mock.requests.length).toBeGreaterThanOrEqual(1)
    for (const seen of stack.mock.requests) expect(seen.headers['host']).toBe(new URL(stack.mock.url).host)
    expect(stack.mock.requests.map((seen) => seen.url)).toContain('/_mock/echo/a')
  })

  it('rejects request smuggling: Content-Length with Transfer-Encoding, and conflicting lengths', async () => {
    stack.mock.reset()
    const both = await raw(
      stack,
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-ctxgate-auth: ${clientToken}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n`,
    )
    const twice = await raw(
      stack,
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-ctxgate-auth: ${clientToken}\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}`,
    )
    expect(both).toMatch(/^HTTP\/1\.1 400/)
    expect(twice).toMatch(/^HTTP\/1\.1 400/)
    expect(stack.mock.requests).toHaveLength(0)
  })
})

describe('client authentication', () => {
  it('answers 401 in the provider shape without a valid x-ctxgate-auth, and never forwards that header', async () => {
    stack.mock.reset()
    const missing = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    expect(missing.statusCode).toBe(401)
    expect(await missing.body.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
    const wrong = await request(`${stack.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ctxgate-auth': 'client-token-0123456789abcdeX' },
      body,
    })
    expect(wrong.statusCode).toBe(401)
    expect(await wrong.body.json()).toMatchObject({ error: { code: 'ctxgate_unauthorized' } })
    expect(stack.mock.requests).toHaveLength(0)
    const ok = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ctxgate-auth': 'another-client-token-000000' },
      body,
    })
    expect(ok.statusCode).toBe(200)
    await ok.body.dump()
    expect(stack.mock.requests[0]?.headers).not.toHaveProperty('x-ctxgate-auth')
  })

  it('keeps health endpoints open and the admin endpoints behind their bearer token', async () => {
    expect((await request(`${stack.proxyUrl}/healthz`)).statusCode).toBe(200)
    const noToken = await request(`${stack.proxyUrl}/metrics`)
    expect(noToken.statusCode).toBe(401)
    await noToken.body.dump()
    expect(
      (await request(`${stack.proxyUrl}/ctxgate/sessions`, { headers: { authorization: 'Bearer nope' } })).statusCode,
    ).toBe(401)
    const withToken = await request(`${stack.proxyUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })
    expect(withToken.statusCode).toBe(200)
    expect(await withToken.body.text()).toContain('ctxgate_requests_total')
  })
})

describe('secrets', () => {
  it('never puts API keys or bearer tokens in logs, metrics or error bodies', async () => {
    const secrets = ['sk-ant-api03-SUPERSECRET-key', 'sk-proj-SUPERSECRET-bearer', clientToken]
    const unreachable = await startStack({
      config: {
        upstreams: { anthropic: { url: 'http://127.0.0.1:9' }, openai: { url: 'http://127.0.0.1:9' } },
        retry: { maxAttempts: 1 },
      },
    })
    try {
      const bodies: string[] = []
      for (const target of [stack, unreachable]) {
        for (const path of ['/v1/messages', '/v1/chat/completions', '/v1/models']) {
          const answer = await request(`${target.proxyUrl}${path}?api_key=${secrets[1]}`, {
            method: path === '/v1/models' ? 'GET' : 'POST',
            headers: {
              'content-type': 'application/json',
              'x-api-key': secrets[0] as string,
              authorization: `Bearer ${secrets[1]}`,
              'x-ctxgate-auth': clientToken,
            },
            ...(path === '/v1/models' ? {} : { body }),
          })
          bodies.push(await answer.body.text())
        }
      }
      await eventually(() => expect(requestLogs(unreachable).length).toBe(3))
      const metrics = await (
        await request(`${stack.proxyUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })
      ).body.text()
      const everything = [...stack.logLines, ...unreachable.logLines, metrics, ...bodies].join('\n')
      for (const secret of secrets) expect(everything).not.toContain(secret)
      expect(bodies.some((text) => text.includes('ctxgate could not get an answer'))).toBe(true)
    } finally {
      await unreachable.close()
    }
  })
})
