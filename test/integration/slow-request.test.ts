import type { IncomingMessage } from 'node:http'
import { connect } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'

const requestTimeoutMs = 600

/** Sends the headers, then one body byte every 100 ms, never finishing; resolves with what came back once closed. */
function trickle(stack: Stack, head: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(stack.proxyUrl).port), '127.0.0.1', () => socket.write(head))
    const drip = setInterval(() => socket.writable && socket.write('x'), 100)
    let answer = ''
    socket.on('data', (data) => (answer += data.toString()))
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearInterval(drip)
      resolve(answer)
    })
  })
}

let stack: Stack
let upstream: ScriptedUpstream

beforeAll(async () => {
  upstream = await startScriptedUpstream()
  stack = await startStack({ config: { server: { requestTimeoutMs } } })
})
afterAll(async () => {
  await stack.close()
  await upstream.close()
})

describe('a client that sends its request slowly', () => {
  it('prevents a trickling model call from being held open: 408, and nothing reaches the upstream', async () => {
    stack.mock.reset()
    const answer = await trickle(
      stack,
      'POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    )
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    expect(stack.mock.requests).toHaveLength(0)
  })

  it('prevents a trickling pass-through upload from holding an upstream socket once it is cut off', async () => {
    const scripted = await startStack({
      config: {
        server: { requestTimeoutMs },
        upstreams: { anthropic: { url: upstream.url }, openai: { url: upstream.url } },
      },
    })
    const seen: IncomingMessage[] = []
    let upstreamClosed = false
    upstream.handle((incoming) => {
      seen.push(incoming)
      incoming.socket.on('close', () => (upstreamClosed = true))
      incoming.resume()
    })
    try {
      const answer = await trickle(
        scripted,
        'POST /v1/files HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\nContent-Length: 100000\r\n\r\n',
      )
      expect(answer).toMatch(/^HTTP\/1\.1 408/)
      // The upload had started upstream (pass-through streams the body); cutting the client closes it too.
      expect(seen).toHaveLength(1)
      await eventually(() => expect(upstreamClosed).toBe(true))
    } finally {
      await scripted.close()
    }
  })

  it('does not cut an answer that streams for longer than the request timeout', async () => {
    const answer = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        // About 20 events this far apart: the stream outlasts the request timeout three times over.
        'x-mock-chunk-delay-ms': String(requestTimeoutMs / 6),
      },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    const text = await answer.body.text()
    expect(answer.statusCode).toBe(200)
    expect((text.match(/^event: /gm) ?? []).length).toBeGreaterThan(4)
    expect(text).toContain('event: message_stop')
  })
})
