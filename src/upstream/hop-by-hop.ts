import type { IncomingHttpHeaders } from 'node:http'

/**
 * Connection-scoped headers (RFC 9110 §7.6.1) that never cross a proxy. `expect` too: Node already
 * answered the client's `100-continue` and read the body, and undici refuses to send it.
 */
const hopByHop = new Set([
  'connection',
  'expect',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

export type HeaderMap = Record<string, string | string[]>

/** Headers to send upstream: the client's, minus hop-by-hop ones, `host`, the body length and ctxgate's own. */
// Both copies run on every model call: `for…in` and no Set for the usual `Connection` value keep them to the copy itself.

export function upstreamRequestHeaders(incoming: IncomingHttpHeaders): HeaderMap {
  const dropped = namedInConnection(incoming['connection'])
  const out: HeaderMap = {}
  for (const name in incoming) {
    const value = incoming[name]
    if (value === undefined) continue
    if (hopByHop.has(name) || dropped?.has(name) === true) continue
    if (name === 'host' || name === 'content-length' || name.startsWith('x-ctxgate-')) continue
    out[name] = value
  }
  return out
}

/** Headers to return to the client: the upstream's, minus hop-by-hop ones. */
export function clientResponseHeaders(upstream: Record<string, string | string[] | undefined>): HeaderMap {
  const dropped = namedInConnection(upstream['connection'])
  const out: HeaderMap = {}
  for (const name in upstream) {
    const value = upstream[name]
    if (value === undefined) continue
    if (hopByHop.has(name) || dropped?.has(name) === true) continue
    out[name] = value
  }
  return out
}

/** A sender may list further hop-by-hop headers in `Connection`; undefined when it lists only `keep-alive`. */
function namedInConnection(value: string | string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined
  const joined = Array.isArray(value) ? value.join(',') : value
  // The usual value: `keep-alive` is dropped anyway.
  if (/^\s*keep-alive\s*$/i.test(joined)) return undefined
  return new Set(
    joined
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  )
}
