import { STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { clientResponseHeaders, upstreamRequestHeaders, type HeaderMap } from '../upstream/hop-by-hop.ts'

/** Headers the WebSocket handshake itself uses: each side's `ws` writes its own. */
const handshakeOnly = new Set([
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-accept',
  'sec-websocket-protocol',
])

/** The client's handshake headers as the upstream should see them: no hop-by-hop, host, handshake or x-ctxgate-*. */
export function upstreamHandshakeHeaders(incoming: IncomingHttpHeaders): HeaderMap {
  const headers = upstreamRequestHeaders(incoming)
  for (const name of handshakeOnly) delete headers[name]
  return headers
}

/** Subprotocols the client offered, to offer upstream in the same order. */
export function offeredProtocols(incoming: IncomingHttpHeaders): string[] {
  const raw = incoming['sec-websocket-protocol']
  return raw === undefined
    ? []
    : raw
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean)
}

/** The upstream's 101 headers worth passing on (request ids, model, rate limits), as `Name: value` lines. */
export function clientHandshakeLines(upstream: IncomingMessage): string[] {
  const lines: string[] = []
  for (const [name, value] of Object.entries(clientResponseHeaders(upstream.headers))) {
    if (handshakeOnly.has(name)) continue
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`)
  }
  return lines
}

/** `ws://` or `wss://` for the configured upstream origin, plus the request's path. */
export function socketUrl(origin: string, path: string): string {
  const url = new URL(path, origin)
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  return url.toString()
}

/** Answers an upgrade with a plain HTTP response and closes the connection. */
export function refuseUpgrade(socket: Duplex, status: number, body: string | Buffer, headers: HeaderMap = {}): void {
  if (socket.destroyed || socket.writableEnded) return
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`]
  for (const [name, value] of Object.entries({ 'content-type': 'application/json', ...headers }))
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`)
  lines.push(`content-length: ${bytes.length}`, 'connection: close')
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]))
}

const maxRefusalBytes = 1024 * 1024

/** Relays the upstream's refusal of an upgrade (status, headers, body) to the client as it came. */
export function relayRefusal(socket: Duplex, response: IncomingMessage): void {
  const chunks: Buffer[] = []
  let size = 0
  response.on('data', (chunk: Buffer) => {
    size += chunk.length
    // A refusal is a short error body; anything longer is cut rather than held.
    if (size <= maxRefusalBytes) chunks.push(chunk)
  })
  response.on('error', () => socket.destroy())
  response.on('end', () => {
    const headers = clientResponseHeaders(response.headers)
    delete headers['content-length']
    refuseUpgrade(socket, response.statusCode ?? 502, Buffer.concat(chunks), headers)
  })
}
