/**
 * The least a Node.js proxy can do: node:http in, one undici pool out, bytes copied, nothing parsed,
 * counted or logged. It is not ctxgate; it is the floor any proxy written in Node pays on this
 * machine, shown beside nginx so ctxgate's own cost can be read off.
 * Usage: tsx bench/node-floor-proxy.ts PORT UPSTREAM_URL
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Pool } from 'undici'

const port = Number(process.argv[2])
const upstream = new Pool(process.argv[3] ?? '', { connections: 256 })
const dropped = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host'])

function withoutHopHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined && !dropped.has(name)) out[name] = value
  }
  return out
}

async function relay(request: IncomingMessage, response: ServerResponse, body: Buffer): Promise<void> {
  try {
    const answer = await upstream.request({
      path: request.url ?? '/',
      method: 'POST',
      headers: withoutHopHeaders(request.headers),
      body,
    })
    response.writeHead(answer.statusCode, withoutHopHeaders(answer.headers))
    for await (const chunk of answer.body)
      if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve))
    response.end()
  } catch {
    if (!response.headersSent) response.writeHead(502)
    response.end()
  }
}

createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => void relay(request, response, Buffer.concat(chunks)))
}).listen(port, '127.0.0.1')
