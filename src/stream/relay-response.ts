import type { ServerResponse } from 'node:http'
import type { EventSourceMessage } from 'eventsource-parser'
import type { ErrorShape } from '../providers/error-shape.ts'
import { clientResponseHeaders, type HeaderMap } from '../upstream/hop-by-hop.ts'
import type { UpstreamReply } from '../upstream/send-with-retries.ts'
import { classifyUpstreamError } from '../upstream/classify-error.ts'
import { createSseTap } from './sse-tap.ts'
import type { ChunkFilter } from './hide-usage-chunk.ts'

export type RelayOutcome = 'complete' | 'client_closed' | 'upstream_failed'

export interface RelayResult {
  readonly outcome: RelayOutcome
  readonly bytes: number
  readonly sse: boolean
  readonly events: number
  /** Whether ctxgate appended its own error event after an upstream failure mid-stream. */
  readonly errorEventSent: boolean
  readonly failure?: string
  /** A copy of a plain (not event-stream, not compressed) body, when asked for and small enough. */
  readonly jsonCopy?: Buffer
  /** performance.now() when the first bytes went to the client. */
  readonly firstWriteAt?: number
}

export interface RelayOptions {
  readonly reply: UpstreamReply
  readonly response: ServerResponse
  readonly errorShape: ErrorShape
  readonly extraHeaders?: HeaderMap
  /** Sees a copy of each SSE event (usage, stop reason); errors in it are contained. */
  readonly onEvent?: (event: EventSourceMessage) => void
  /** Rewrites what the client gets of an event stream (the tap still sees the upstream's bytes). */
  readonly filter?: ChunkFilter
  /** Keep a copy of a plain body up to this many bytes (to read its usage). */
  readonly keepJsonUpTo?: number
  /** Aborts the upstream request; called when the client goes away. */
  readonly abortUpstream: () => void
}

/**
 * Sends the upstream's answer to the client byte for byte, each chunk written as it arrives, with
 * the client's backpressure passed on to the upstream.
 */
export async function relayResponse(options: RelayOptions): Promise<RelayResult> {
  const { reply, response } = options
  const sse = isEventStream(reply.headers['content-type'])
  const tap = sse ? createSseTap(guard(options.onEvent)) : undefined
  let bytes = 0
  let clientGone = false
  const encoding = reply.headers['content-encoding']
  const copyLimit = !sse && (encoding === undefined || encoding === 'identity') ? (options.keepJsonUpTo ?? 0) : 0
  const copy: Buffer[] = []
  const onClose = (): void => {
    if (!response.writableFinished) {
      clientGone = true
      options.abortUpstream()
    }
  }
  response.once('close', onClose)

  const filter = sse ? options.filter : undefined
  const headers = { ...clientResponseHeaders(reply.headers), ...options.extraHeaders }
  // A filtered stream is shorter than the upstream said.
  if (filter) delete headers['content-length']
  response.writeHead(reply.status, headers)
  let firstWriteAt: number | undefined
  const send = async (chunk: Buffer): Promise<void> => {
    if (chunk.length === 0) return
    firstWriteAt ??= performance.now()
    bytes += chunk.length
    if (!response.write(chunk)) await drained(response)
  }
  const write = async (chunk: Buffer): Promise<void> => {
    tap?.push(chunk)
    if (!sse && bytes + chunk.length <= copyLimit) copy.push(chunk)
    await send(filter ? filter.push(chunk) : chunk)
  }

  try {
    if (reply.firstChunk) await write(reply.firstChunk)
    for (let next = await reply.rest.next(); !next.done; next = await reply.rest.next()) {
      if (clientGone) break
      await write(next.value)
    }
  } catch (error) {
    response.off('close', onClose)
    if (clientGone || response.destroyed) return { outcome: 'client_closed', bytes, sse, events: tap?.eventCount ?? 0, errorEventSent: false }
    const failure = classifyUpstreamError(error).label
    if (tap) {
      // Close any half-sent event first, so the error event is parsed on its own.
      const frame = (tap.atEventBoundary ? '' : '\n\n') + options.errorShape.streamEvent('upstream_unreachable', `ctxgate: the upstream stream failed mid-way (${failure}); no retry after the first byte.`)
      response.end(frame)
      return { outcome: 'upstream_failed', bytes, sse, events: tap.eventCount, errorEventSent: true, failure }
    }
    // A JSON body cut short cannot be repaired; ending the socket makes the client see the cut.
    response.destroy()
    return { outcome: 'upstream_failed', bytes, sse, events: 0, errorEventSent: false, failure }
  }
  response.off('close', onClose)
  tap?.end()
  if (clientGone) return { outcome: 'client_closed', bytes, sse, events: tap?.eventCount ?? 0, errorEventSent: false }
  if (filter) await send(filter.end())
  response.end()
  return { outcome: 'complete', bytes, sse, events: tap?.eventCount ?? 0, errorEventSent: false, ...(firstWriteAt === undefined ? {} : { firstWriteAt }), ...(copyLimit > 0 && bytes <= copyLimit ? { jsonCopy: Buffer.concat(copy) } : {}) }
}

function isEventStream(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType
  return value !== undefined && value.toLowerCase().startsWith('text/event-stream')
}

function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done)
      response.off('close', done)
      resolve()
    }
    response.on('drain', done)
    response.on('close', done)
  })
}

function guard(onEvent: RelayOptions['onEvent']): ((event: EventSourceMessage) => void) | undefined {
  if (!onEvent) return undefined
  return (event) => {
    try {
      onEvent(event)
    } catch {
      // Observing a stream must never break it.
    }
  }
}
