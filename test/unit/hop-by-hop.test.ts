import { describe, expect, it } from 'vitest'
import { clientResponseHeaders, upstreamRequestHeaders } from '../../src/upstream/hop-by-hop.ts'

describe('upstreamRequestHeaders', () => {
  it('keeps end-to-end headers and drops hop-by-hop, host, length and ctxgate headers', () => {
    const out = upstreamRequestHeaders({
      host: 'proxy:8787',
      'content-length': '12',
      'content-type': 'application/json',
      'x-api-key': 'k',
      'anthropic-beta': 'a,b',
      connection: 'keep-alive, X-Private',
      'x-private': '1',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      te: 'trailers',
      upgrade: 'h2c',
      'proxy-authorization': 'Basic x',
      'x-ctxgate-session': 's',
      'set-cookie': ['a', 'b'],
    })
    expect(out).toEqual({
      'content-type': 'application/json',
      'x-api-key': 'k',
      'anthropic-beta': 'a,b',
      'set-cookie': ['a', 'b'],
    })
  })
})

describe('clientResponseHeaders', () => {
  it('keeps every end-to-end header, repeated ones included', () => {
    const out = clientResponseHeaders({
      'content-type': 'text/event-stream',
      'request-id': 'req_1',
      'set-cookie': ['a=1', 'b=2'],
      'transfer-encoding': 'chunked',
      connection: 'close',
      'x-should-retry': 'true',
    })
    expect(out).toEqual({
      'content-type': 'text/event-stream',
      'request-id': 'req_1',
      'set-cookie': ['a=1', 'b=2'],
      'x-should-retry': 'true',
    })
  })
})
