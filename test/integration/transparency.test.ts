import { connect } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack

beforeAll(async () => {
  // Rewriting off: these tests are about bytes ctxgate must not touch.
  stack = await startStack({ config: { server: { bodyLimitBytes: 4096 }, rewrite: { enabled: false } } })
})
afterAll(() => stack.close())
beforeEach(() => stack.mock.reset())

const anthropicHeaders = {
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'x-api-key': 'sk-ant-api03-SECRET-transparency',
}

describe('transparency', () => {
  it('forwards an unchanged body as the original bytes, odd formatting and unknown fields included', async () => {
    const body =
      '{ "model":"claude-sonnet-5",\n  "max_tokens":16, "x_future_field": {"nested": [1, 2.50, "\\u00e9"]},\t"messages":[{"role":"user","content":"h\\u00e9llo","y_unknown":true}] }'
    const answer = await request(`${stack.proxyUrl}/v1/messages`, { method: 'POST', headers: anthropicHeaders, body })
    expect(answer.statusCode).toBe(200)
    await answer.body.dump()
    expect(stack.mock.requests[0]?.body).toBe(body)
  })

  it('forwards a body that is not JSON untouched and returns the upstream error as sent', async () => {
    const answer = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: anthropicHeaders,
      body: '{not json',
    })
    expect(answer.statusCode).toBe(400)
    expect(await answer.body.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(stack.mock.requests[0]?.body).toBe('{not json')
  })

  it('keeps query strings, including ?beta=true', async () => {
    const answer = await request(`${stack.proxyUrl}/v1/messages?beta=true&x=a%20b&x=c`, {
      method: 'POST',
      headers: anthropicHeaders,
      body: '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"}]}',
    })
    await answer.body.dump()
    expect(stack.mock.requests[0]?.url).toBe('/v1/messages?beta=true&x=a%20b&x=c')
  })

  it('passes unusual headers, drops hop-by-hop ones and consumes x-ctxgate-*', async () => {
    const answer = await request(`${stack.proxyUrl}/_mock/echo/headers`, {
      method: 'POST',
      headers: {
        ...anthropicHeaders,
        'anthropic-beta': 'a-2025-01-01,b-2026-02-02',
        'x-weird_header.name': 'value with  spaces; and=signs',
        'x-repeated': ['one', 'two'],
        'proxy-authorization': 'Basic c2VjcmV0',
        'x-ctxgate-session': 'session-123',
        'x-ctxgate-mode': 'passthrough',
      },
      body: 'payload',
    })
    const seen = (await answer.body.json()) as { headers: Record<string, string>; body: string; url: string }
    expect(seen.url).toBe('/_mock/echo/headers')
    expect(seen.body).toBe('payload')
    expect(seen.headers['anthropic-beta']).toBe('a-2025-01-01,b-2026-02-02')
    expect(seen.headers['x-weird_header.name']).toBe('value with  spaces; and=signs')
    expect(seen.headers['x-repeated']).toBe('one, two')
    expect(seen.headers['x-api-key']).toBe('sk-ant-api03-SECRET-transparency')
    expect(seen.headers).not.toHaveProperty('proxy-authorization')
    expect(seen.headers).not.toHaveProperty('x-ctxgate-session')
    expect(seen.headers).not.toHaveProperty('x-ctxgate-mode')
    expect(seen.headers['host']).toBe(new URL(stack.mock.url).host)
  })

  it('drops headers the client names in Connection (raw HTTP/1.1, as undici would not send them)', async () => {
    const raw = await rawHttp(
      stack,
      'GET /_mock/echo/connection HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\nConnection: close, x-listed-in-connection\r\nx-listed-in-connection: drop me\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nx-kept: yes\r\n\r\n',
    )
    const seen = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { headers: Record<string, string> }
    expect(seen.headers['x-kept']).toBe('yes')
    expect(seen.headers).not.toHaveProperty('x-listed-in-connection')
    expect(seen.headers).not.toHaveProperty('keep-alive')
    expect(seen.headers).not.toHaveProperty('te')
  })

  it('returns the upstream status and headers as sent, on any method and path', async () => {
    const answer = await request(`${stack.proxyUrl}/v1/_mock/echo/files/abc?limit=2`, {
      method: 'DELETE',
      headers: { authorization: 'Bearer sk-openai-SECRET', 'x-echo-status': '418' },
    })
    expect(answer.statusCode).toBe(418)
    expect(answer.headers['x-echo-response']).toBe('yes')
    expect(answer.headers['set-cookie']).toBe('session=1; Path=/')
    const seen = (await answer.body.json()) as { method: string; url: string }
    expect(seen).toMatchObject({ method: 'DELETE', url: '/v1/_mock/echo/files/abc?limit=2' })
  })

  it('streams a passthrough upload through without reading it whole', async () => {
    const big = 'x'.repeat(200_000)
    const answer = await request(`${stack.proxyUrl}/v1/_mock/echo/files`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: big,
    })
    const seen = (await answer.body.json()) as { body: string; headers: Record<string, string> }
    expect(seen.body.length).toBe(200_000)
    expect(seen.headers['content-length']).toBe('200000')
  })

  it('answers a model call over the body limit with 413 in the provider shape and does not forward it', async () => {
    const body = JSON.stringify({
      model: 'm',
      max_tokens: 1,
      messages: [{ role: 'user', content: 'y'.repeat(10_000) }],
    })
    const answer = await request(`${stack.proxyUrl}/v1/messages`, { method: 'POST', headers: anthropicHeaders, body })
    expect(answer.statusCode).toBe(413)
    expect(await answer.body.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
    const openai = await request(`${stack.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    expect(openai.statusCode).toBe(413)
    expect(await openai.body.json()).toMatchObject({ error: { code: 'request_too_large' } })
    expect(stack.mock.requests).toHaveLength(0)
  })

  it('refuses an absolute-URI request target instead of following its host', async () => {
    const raw = await rawHttp(
      stack,
      'GET http://169.254.169.254/latest/meta-data HTTP/1.1\r\nHost: 169.254.169.254\r\nConnection: close\r\n\r\n',
    )
    expect(raw).toMatch(/^HTTP\/1\.1 400/)
    expect(stack.mock.requests).toHaveLength(0)
  })

  it('writes one log line per request, with no API key in any line', async () => {
    const before = requestLogs(stack).length
    await (
      await request(`${stack.proxyUrl}/v1/messages`, {
        method: 'POST',
        headers: anthropicHeaders,
        body: '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"}]}',
      })
    ).body.dump()
    await (
      await request(`${stack.proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-openai-SECRET-bearer', 'content-type': 'application/json' },
        body: '{"model":"g","messages":[{"role":"user","content":"q"}]}',
      })
    ).body.dump()
    await (
      await request(`${stack.proxyUrl}/v1/models?key=sk-query-SECRET`, {
        headers: { authorization: 'Bearer sk-openai-SECRET-bearer' },
      })
    ).body.dump()
    await eventually(() => expect(requestLogs(stack).length).toBe(before + 3))
    const lines = requestLogs(stack).slice(before)
    expect(lines.map((line) => line['route'])).toEqual(['anthropic-messages', 'openai-chat', 'passthrough'])
    // Each model call's line names the model the client asked for; a passthrough route has none.
    expect(lines.map((line) => line['model'])).toEqual(['m', 'g', undefined])
    for (const line of lines)
      expect(line).toMatchObject({
        method: expect.any(String),
        status: 200,
        upstreamStatus: 200,
        attempts: 1,
        durationMs: expect.any(Number),
        bytesOut: expect.any(Number),
      })
    expect(stack.logLines.join('\n')).not.toMatch(/SECRET/)
  })
})

/** Sends hand-written HTTP/1.1 and returns everything the server answers until it closes. */
function rawHttp(target: Stack, text: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(target.proxyUrl).port), '127.0.0.1', () => socket.write(text))
    let answer = ''
    socket.on('data', (data) => (answer += data.toString()))
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
  })
}
