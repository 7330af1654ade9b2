import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'

const apiKey = 'sk-ant-api03-secret-key-in-a-broken-request'
const bearer = 'sk-proj-bearer-secret-in-a-broken-request'
const clientToken = 'client-token-secret-0123456789'
let stack: Stack

beforeAll(async () => {
  stack = await startStack({ logLevel: 'trace', config: { metrics: { token: 'admin-token-0123456789abcdef' } } })
})
afterAll(() => stack.close())

/** Writes raw bytes and waits for the server to close the connection. */
function sendRaw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(stack.proxyUrl).port), '127.0.0.1', () => socket.write(text))
    let answer = ''
    socket.on('data', (data) => (answer += data.toString()))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe('a malformed request logged at trace level', () => {
  it('keeps keys out of the log: the client-error line has no raw packet', async () => {
    const answer = await sendRaw(
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: ${apiKey}\r\nauthorization: Bearer ${bearer}\r\n` +
        `x-ctxgate-auth: ${clientToken}\r\nContent-Length: 2\r\nBroken Header\r\n\r\n{}`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400/)
    expect(answer).toContain('x-ctxgate-error-code: CTXGATE_INVALID_REQUEST')
    // The parse error itself is logged (so the test looks at the line that used to carry the packet).
    await eventually(() => expect(stack.logLines.some((line) => line.includes('client error'))).toBe(true))
    const log = stack.logLines.join('\n')
    for (const secret of [apiKey, bearer, clientToken]) expect(log).not.toContain(secret)
    // Node attaches the request's raw bytes to the error; they would carry every header, as a byte array.
    expect(log).not.toContain('"type":"Buffer"')
    expect(log).not.toContain('rawPacket')
  })
})
