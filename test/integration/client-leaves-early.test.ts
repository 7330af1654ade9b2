import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

let upstream: Server
let stack: Stack
let upstreamClosed = 0
let upstreamRequests = 0

beforeAll(async () => {
  // A Responses stream that opens, then "thinks" for ever: ctxgate holds its preamble meanwhile.
  upstream = createServer((request, response) => {
    upstreamRequests++
    request.resume()
    response.on('close', () => upstreamClosed++)
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.write('event: response.created\ndata: {"type":"response.created","response":{"id":"resp_1"}}\n\n')
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  stack = await startStack({ config: { upstreams: { openai: { url }, anthropic: { url } } } })
})
afterAll(async () => {
  await stack.close()
  upstream.closeAllConnections()
  await new Promise((resolve) => upstream.close(resolve))
})

describe('a client that leaves while ctxgate holds a stream preamble', () => {
  it('prevents a hung request: the upstream is aborted and the request is logged as client_closed', async () => {
    const client = httpRequest(`${stack.proxyUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    })
    client.on('error', () => undefined)
    client.end(JSON.stringify({ model: 'gpt-5', stream: true, input: 'hi' }))
    // Left once the upstream has answered with its preamble, which ctxgate holds back.
    await eventually(() => expect(upstreamRequests).toBe(1))
    client.destroy()
    await eventually(() => expect(upstreamClosed).toBe(1))
    await eventually(() =>
      expect(requestLogs(stack).find((line) => line['path'] === '/v1/responses')?.['outcome']).toBe('client_closed'),
    )
  })
})
