import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack.close())

/** Sends hand-written bytes and returns everything the server answers until it closes. */
function raw(text: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(stack.proxyUrl).port), '127.0.0.1', () => socket.write(text))
    let answer = ''
    socket.on('data', (data) => (answer += data.toString()))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe('request targets', () => {
  it.each([
    '/v1/../../admin/keys',
    '/v1/./models',
    '/v1/%2e%2e/%2E%2E/admin/keys',
    '/v1/..%2fadmin/keys',
    '/v1/models/..?after=query',
  ])('does not let the dot-segments of %s walk out of the upstream base path', async (target) => {
    stack.mock.reset()
    const answer = await raw(
      `GET ${target} HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\nConnection: close\r\n\r\n`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toContain('x-ctxgate-error-code: CTXGATE_INVALID_REQUEST')
    // In the provider's own error shape (Anthropic here: the client sent anthropic-version).
    expect(answer).toContain('"type":"invalid_request_error"')
    expect(stack.mock.requests).toHaveLength(0)
  })

  it('still forwards paths whose segments only contain dots among other characters', async () => {
    stack.mock.reset()
    const answer = await raw(`GET /_mock/echo/a..b/.c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    expect(answer).toMatch(/^HTTP\/1\.1 (200|404) /)
    expect(stack.mock.requests.map((seen) => seen.url)).toEqual(['/v1/_mock/echo/a..b/.c'])
  })
})

describe('Expect: 100-continue', () => {
  it('does not turn a curl-style upload into a 502: the client gets 100 Continue, the upstream never sees Expect', async () => {
    stack.mock.reset()
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(stack.proxyUrl).port), '127.0.0.1', () =>
        socket.write(
          `POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nanthropic-version: 2023-06-01\r\n` +
            `Expect: 100-continue\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
        ),
      )
      let received = ''
      let sentBody = false
      socket.on('data', (data) => {
        received += data.toString()
        // Like curl: the body goes only once the server has said to continue.
        if (!sentBody && received.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
          sentBody = true
          socket.write(body)
        }
      })
      socket.on('close', () => resolve(received))
      socket.on('error', reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /)
    expect(stack.mock.requests).toHaveLength(1)
    expect(stack.mock.requests[0]?.headers['expect']).toBeUndefined()
    expect(JSON.parse(stack.mock.requests[0]?.body ?? '{}')).toMatchObject({ model: 'claude-sonnet-4-5' })
  })
})

describe("ctxgate's own paths", () => {
  it('does not forward an unknown /ctxgate/ path (with the live page cookie) to an upstream', async () => {
    stack.mock.reset()
    const answer = await raw(
      // A loopback Host: any other name is refused by the admin Host check before routing.
      'GET /ctxgate/unknown HTTP/1.1\r\nHost: 127.0.0.1\r\ncookie: ctxgate_live=secret-cookie\r\nConnection: close\r\n\r\n',
    )
    expect(answer).toMatch(/^HTTP\/1\.1 404 /)
    expect(stack.mock.requests).toHaveLength(0)
  })
})

describe('requests Node cannot parse', () => {
  it('answers oversized headers with 431 and ctxgate error code, in a body either SDK reads', async () => {
    const answer = await raw(`GET /v1/models HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(answer).toMatch(/^HTTP\/1\.1 431 /)
    expect(answer).toContain('x-ctxgate-error-code: CTXGATE_HEADERS_TOO_LARGE')
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { message: string } }
    expect(body.error.message).toMatch(/headers/)
  })

  it('answers a malformed Content-Length with 400 and ctxgate error code', async () => {
    const answer = await raw('POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}')
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toContain('x-ctxgate-error-code: CTXGATE_INVALID_REQUEST')
  })
})
