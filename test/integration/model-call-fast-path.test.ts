import { connect } from 'node:net'
import { Readable } from 'node:stream'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack.close())
beforeEach(() => stack.mock.reset())

const headers = { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant-test' }
const body = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 32,
  metadata: { user_id: 'fast-path' },
  messages: [{ role: 'user', content: `Summarize the design. ${'Context line. '.repeat(200)}` }],
})

/** The same request with a declared length (the fast path) or chunked (fastify's route). */
async function send(chunked: boolean): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const answer = await request(`${stack.proxyUrl}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: chunked ? Readable.from([Buffer.from(body)]) : body,
  })
  return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() }
}

describe('model calls with and without the fast path', () => {
  it('prevents the two paths from drifting: the upstream gets the same bytes, the client the same answer, the log the same fields', async () => {
    const plain = await send(false)
    const chunked = await send(true)
    expect(stack.mock.requests).toHaveLength(2)
    const [first, second] = stack.mock.requests
    expect(first?.url).toBe('/v1/messages?beta=true')
    expect(second?.url).toBe(first?.url)
    expect(second?.body).toBe(first?.body)
    expect(plain.status).toBe(200)
    expect(chunked.status).toBe(200)
    expect(Object.keys(chunked.headers).toSorted()).toEqual(Object.keys(plain.headers).toSorted())
    await eventually(() => expect(requestLogs(stack)).toHaveLength(2))
    const [plainLine, chunkedLine] = requestLogs(stack).slice(-2)
    const shape = (line: Record<string, unknown> | undefined) =>
      Object.keys(line ?? {})
        .filter((key) => !['time', 'durationMs'].includes(key))
        .toSorted()
    expect(shape(chunkedLine)).toEqual(shape(plainLine))
    // One counter for both paths: fastify's own ids, never the same twice.
    expect(plainLine?.['reqId']).toMatch(/^req-[0-9a-z]+$/)
    expect(chunkedLine?.['reqId']).toMatch(/^req-[0-9a-z]+$/)
    expect(chunkedLine?.['reqId']).not.toBe(plainLine?.['reqId'])
  })

  it('prevents a body cut off mid-way from reaching the upstream: it is logged as unreadable, nothing is sent', async () => {
    const before = stack.logLines.length
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(new URL(stack.proxyUrl).port), '127.0.0.1', () => {
        socket.write(
          `POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nx-api-key: k\r\n` +
            `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 100)}`,
        )
        setTimeout(() => socket.destroy(), 50)
      })
      socket.on('close', () => resolve())
      socket.on('error', reject)
    })
    await eventually(() =>
      expect(stack.logLines.slice(before).some((line) => line.includes('"msg":"request rejected"'))).toBe(true),
    )
    const rejected = stack.logLines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line['msg'] === 'request rejected')
    expect(rejected?.['code']).toBe('CTXGATE_INVALID_REQUEST')
    expect(rejected?.['reqId']).toMatch(/^req-[0-9a-z]+$/)
    expect(stack.mock.requests).toHaveLength(0)
  })

  it('leaves to fastify what it does not take: another media type, and a body over the limit, are answered as before', async () => {
    const text = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body,
    })
    expect(text.statusCode).toBe(200)
    await text.body.text()
    expect(stack.mock.requests.at(-1)?.body).toBe(body)
    const limit = stack.config.server.bodyLimitBytes
    const tooLarge = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(limit + 1) },
      body: 'x'.repeat(limit + 1),
    })
    expect(tooLarge.statusCode).toBe(413)
    expect(tooLarge.headers['x-ctxgate-error-code']).toBe('CTXGATE_REQUEST_TOO_LARGE')
    await tooLarge.body.text()
  })
})
