/**
 * Loaded into a proxy process (`--import`) by bench/hot-path-stages.ts: stamps each POST's stages on
 * performance.now(), measured from its arrival, using only what any Node proxy goes through (the
 * node:http server and response, undici's diagnostics channels), so ctxgate, a baseline build and
 * the Node floor are timed by the same clock without changing their code. Requests are sent one at
 * a time, so the request in flight owns every undici event. The stamps are written to
 * CTXGATE_STAGE_DIR/<pid>.json when the process is told to stop (SIGTERM).
 */
import { subscribe } from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import { join } from 'node:path'

type Stamps = Record<string, number>
const records: Stamps[] = []
let current: { readonly arrived: number; readonly stamps: Stamps } | undefined

function stamp(name: string): void {
  if (current && current.stamps[name] === undefined) current.stamps[name] = performance.now() - current.arrived
}

// The upstream side, as undici reports it: created (the proxy has its body), headers and body written, answer's headers in.
subscribe('undici:request:create', () => stamp('upstream request created'))
subscribe('undici:client:sendHeaders', () => stamp('upstream headers written'))
subscribe('undici:request:bodySent', () => stamp('upstream body written'))
subscribe('undici:request:headers', () => stamp('upstream answer headers'))

function timeResponse(response: ServerResponse): void {
  const { writeHead, end } = response
  response.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    stamp('client headers written')
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args)
  } as ServerResponse['writeHead']
  response.end = function (this: ServerResponse, ...args: unknown[]) {
    stamp('client end called')
    const result = (end as (...a: unknown[]) => ServerResponse).apply(this, args)
    // end() flushes the socket: the client has every byte once it returns.
    stamp('client end returned')
    // What the proxy still does in this turn of the loop (metrics, log line, usage) ends before an immediate runs.
    const owner = current
    setImmediate(() => {
      if (owner) owner.stamps['work after the answer done'] = performance.now() - owner.arrived
    })
    return result
  } as ServerResponse['end']
}

const emit = http.Server.prototype.emit
http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]): boolean {
  const [request, response] = args as [IncomingMessage, ServerResponse]
  if (event === 'request' && request.method === 'POST') {
    current = { arrived: performance.now(), stamps: {} }
    const own = current
    request.once('end', () => {
      own.stamps['body read'] ??= performance.now() - own.arrived
    })
    timeResponse(response)
    records.push(current.stamps)
  }
  return (emit as (this: http.Server, ...all: unknown[]) => boolean).call(this, event, ...args)
} as http.Server['emit']

process.on('SIGTERM', () => {
  const folder = process.env['CTXGATE_STAGE_DIR']
  if (folder) writeFileSync(join(folder, `${process.pid}.json`), JSON.stringify(records))
  // The floor has no handler of its own; ctxgate's shuts itself down.
  if (process.listenerCount('SIGTERM') === 1) process.exit(0)
})
