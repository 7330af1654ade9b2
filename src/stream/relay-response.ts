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
  /** Read a plain (not event-stream, not compressed) body up to this many bytes for its usage. */
  readonly plainUpTo?: number
  /**
   * Settle before the client has the whole answer (a shared store: the client's next request may
   * reach another replica): plain bodies are held until complete, and the stream chunk that completes
   * the usage waits. Otherwise bytes go straight out and settling happens at the end.
   */
  readonly settleFirst?: boolean
  /** Records what the answer reported; called once, before the client has the whole answer (a plain body's copy passed in). */
  readonly settle?: (plainBody: Buffer | undefined) => Promise<void>
  /** True once the stream has carried its final usage. */
  readonly usageComplete?: () => boolean
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
  // A small plain answer (a JSON message) is copied for its usage; with settleFirst it is also held until complete.
  let copyLimit = !sse && (encoding === undefined || encoding === 'identity') ? (options.plainUpTo ?? 0) : 0
  const hold = options.settleFirst === true
  let copied: Buffer[] = []
  let copiedBytes = 0
  let settled = options.settle === undefined
  const settle = async (copy?: Buffer): Promise<void> => {
    if (settled) return
    settled = true
    try {
      await options.settle?.(copy)
    } catch {
      // Accounting must never break the answer.
    }
  }
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
  let heldUpTo = 0
  const flushHeld = async (): Promise<void> => {
    const chunks = copied.slice(heldUpTo)
    heldUpTo = copied.length
    for (const chunk of chunks) await send(chunk)
  }
  const write = async (chunk: Buffer): Promise<void> => {
    if (tap) {
      tap.push(chunk)
      // With a shared store, the chunk that completes the usage goes out only after it is recorded.
      if (hold && !settled && options.usageComplete?.()) await settle()
      await send(filter ? filter.push(chunk) : chunk)
      return
    }
    if (copyLimit > 0) {
      copied.push(chunk)
      copiedBytes += chunk.length
      if (copiedBytes > copyLimit) {
        // Too big to read for usage: let it all go.
        copyLimit = 0
        await flushHeld()
        copied = []
        heldUpTo = 0
        return
      }
      if (!hold) {
        heldUpTo = copied.length
        await send(chunk)
      }
      return
    }
    await send(chunk)
  }

  try {
    if (reply.firstChunk) await write(reply.firstChunk)
    for (let next = await reply.rest.next(); !next.done; next = await reply.rest.next()) {
      if (clientGone) break
      await write(next.value)
    }
  } catch (error) {
    response.off('close', onClose)
    await settle()
    if (clientGone || response.destroyed)
      return { outcome: 'client_closed', bytes, sse, events: tap?.eventCount ?? 0, errorEventSent: false }
    const failure = classifyUpstreamError(error).label
    if (tap) {
      // Close any half-sent event first, so the error event is parsed on its own.
      const frame =
        (tap.atEventBoundary ? '' : '\n\n') +
        options.errorShape.streamEvent(
          'upstream_unreachable',
          `ctxgate: the upstream stream failed mid-way (${failure}); no retry after the first byte.`,
        )
      response.end(frame)
      return { outcome: 'upstream_failed', bytes, sse, events: tap.eventCount, errorEventSent: true, failure }
    }
    // A JSON body cut short cannot be repaired; ending the socket makes the client see the cut.
    await flushHeld()
    response.destroy()
    return { outcome: 'upstream_failed', bytes, sse, events: 0, errorEventSent: false, failure }
  }
  response.off('close', onClose)
  tap?.end()
  if (hold) await settle(copyLimit > 0 ? Buffer.concat(copied) : undefined)
  if (clientGone) return { outcome: 'client_closed', bytes, sse, events: tap?.eventCount ?? 0, errorEventSent: false }
  await flushHeld()
  if (!hold) await settle(copyLimit > 0 ? Buffer.concat(copied) : undefined)
  if (filter) await send(filter.end())
  response.end()
  return {
    outcome: 'complete',
    bytes,
    sse,
    events: tap?.eventCount ?? 0,
    errorEventSent: false,
    ...(firstWriteAt === undefined ? {} : { firstWriteAt }),
  }
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
