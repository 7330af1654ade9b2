import fc from 'fast-check'
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

/** The copies as first written (Object.entries and a Set per call): the fast ones must give the same headers, in the same order. */
function referenceCopy(
  headers: Record<string, string | string[] | undefined>,
  extraDropped: (name: string) => boolean,
): Record<string, string | string[]> {
  const hop = ['connection', 'expect', 'keep-alive', 'proxy-connection', 'proxy-authenticate']
  const more = ['proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']
  const connection = headers['connection']
  const joined = connection === undefined ? '' : Array.isArray(connection) ? connection.join(',') : connection
  const named = new Set(
    joined
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  )
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || [...hop, ...more].includes(name) || named.has(name) || extraDropped(name)) continue
    out[name] = value
  }
  return out
}

describe('the header copies', () => {
  const name = fc.constantFrom(
    'content-type',
    'x-api-key',
    'x-private',
    'keep-alive',
    'close',
    'host',
    'te',
    '123',
    'x-ctxgate-mode',
    'content-length',
    'set-cookie',
  )
  const connection = fc.constantFrom(
    undefined,
    'keep-alive',
    'Keep-Alive',
    ' keep-alive ',
    'close',
    'keep-alive, X-Private',
    'close, te',
    ['keep-alive', 'x-private'],
  )
  const headers = fc
    .tuple(fc.dictionary(name, fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 2 }))), connection)
    .map(([values, value]) => (value === undefined ? values : { ...values, connection: value }))

  it('give what the first copies gave, in the same order, whatever Connection names', () => {
    fc.assert(
      fc.property(headers, (sent) => {
        const request = (header: string): boolean =>
          header === 'host' || header === 'content-length' || header.startsWith('x-ctxgate-')
        expect(Object.entries(upstreamRequestHeaders(sent))).toEqual(Object.entries(referenceCopy(sent, request)))
        expect(Object.entries(clientResponseHeaders(sent))).toEqual(Object.entries(referenceCopy(sent, () => false)))
      }),
      { numRuns: 500 },
    )
  })
})
