import type { ServerResponse } from 'node:http'
import type { EventSourceMessage } from 'eventsource-parser'
import type { ErrorKind } from '../errors.ts'
import { clientResponseHeaders, type HeaderMap } from '../upstream/hop-by-hop.ts'
import type { BodyChunks } from '../upstream/exchange.ts'
import type { UpstreamReply } from '../upstream/send-with-retries.ts'
import { classifyUpstreamError } from '../upstream/classify-error.ts'
import { firstHeader, isEventStream } from '../util/headers.ts'
import type { ChunkFilter } from './chunk-filter.ts'
import { ClientWriter } from './client-writer.ts'
import type { OpenStreams } from './open-streams.ts'
import type { RelayResult } from './relay-result.ts'
import { createSseTap } from './sse-tap.ts'
import { TapBehind } from './tap-behind.ts'

export interface RelayOptions {
  readonly reply: UpstreamReply
  readonly response: ServerResponse
  /** Words an error as an SSE frame the client's SDK raises mid-stream (the provider's error shape). */
  readonly errorShape: { streamEvent(kind: ErrorKind, message: string): string }
  readonly extraHeaders?: HeaderMap
  /** Reads the answer's usage on the way and records it once. */
  readonly usage?: RelayedUsage
  /** Rewrites what the client gets of an event stream (the tap still sees the upstream's bytes). */
  readonly filter?: ChunkFilter
  /** Read a plain (not event-stream, not compressed) body up to this many bytes for its usage. */
  readonly plainUpTo?: number
  /**
   * Settle before the client has the whole answer (a shared store: the client's next request may
   * reach another replica): plain bodies are held until complete, and the stream chunk that completes
   * the usage waits. Otherwise bytes go straight out and settling happens after the last one.
   */
  readonly settleFirst?: boolean
  /** Aborts the upstream request; called when the client goes away. */
  readonly abortUpstream: () => void
  /** Where an event stream registers itself, so a shutdown past its grace can end it with an error event. */
  readonly openStreams?: OpenStreams
}

/** The answer's usage as the relay sees it; its methods never throw (observing must never break the answer). */
export interface RelayedUsage {
  /** Sees a copy of each SSE event (usage, stop reason). */
  onEvent(event: EventSourceMessage): void
  /** True once the stream has carried its final usage. */
  complete(): boolean
  /** It has been recorded. */
  readonly settled: boolean
  /** Records what the answer reported, at most once (a plain body's copy passed in). */
  settle(plainBody?: Buffer): Promise<void>
}

/**
 * Sends the upstream's answer to the client byte for byte, each chunk written as soon as it is read
 * (with the short ones already received behind it), with the client's backpressure passed on to the upstream.
 */
export async function relayResponse(options: RelayOptions): Promise<RelayResult> {
  const { reply, response } = options
  const writer = new ClientWriter(response, options.abortUpstream)
  const usage = options.usage
  try {
    if (isEventStream(reply.headers['content-type'])) {
      const filter = options.filter
      const headers = { ...clientResponseHeaders(reply.headers), ...options.extraHeaders }
      // A filtered stream is shorter than the upstream said.
      if (filter) delete headers['content-length']
      response.writeHead(reply.status, headers)
      return await relayEventStream(writer, options, usage, filter)
    }
    response.writeHead(reply.status, { ...clientResponseHeaders(reply.headers), ...options.extraHeaders })
    return await relayPlainBody(writer, options, usage)
  } finally {
    writer.release()
  }
}

/**
 * Hands each chunk of the upstream body to `handle` in order, the already-read first one included,
 * until the client leaves; waits only when `handle` gives something to wait for. With `joined`,
 * each chunk comes with those already received after it as one buffer: a short answer that arrived
 * in one socket read (a 2 KB stream is twenty chunks, an event each) is one write to the client, not
 * twenty, each with its own chunked-encoding frame. Nothing waits to be joined: only what is here.
 */
async function forEachChunk(
  reply: UpstreamReply,
  writer: ClientWriter,
  handle: (chunk: Buffer) => Promise<void> | undefined,
  joined: boolean,
): Promise<void> {
  const withQueued = (chunk: Buffer): Buffer => (joined ? joinQueued(chunk, reply.rest) : chunk)
  const first = reply.firstChunk ? handle(withQueued(reply.firstChunk)) : undefined
  if (first) await first
  for (let next = await reply.rest.next(); !next.done; next = await reply.rest.next()) {
    if (writer.clientGone) return
    const handled = handle(withQueued(next.value))
    if (handled) await handled
  }
}

/** `chunk` and the short chunks received after it that wait in `rest`, as one buffer (or `chunk` alone). */
function joinQueued(chunk: Buffer, rest: BodyChunks): Buffer {
  if (chunk.length >= joinedChunkBytes) return chunk
  const queued = rest.takeQueued({ totalBytes: joinedMaxBytes - chunk.length, chunkBytes: joinedChunkBytes })
  return queued.length === 0 ? chunk : Buffer.concat([chunk, ...queued])
}

/**
 * Joining copies, so only short chunks are joined (an event each, a few hundred bytes), up to
 * 32 KiB in all; a chunk of 4 KiB or more (TLS hands over up to 16 KiB at a time) goes as it came.
 */
const joinedChunkBytes = 4 * 1024
const joinedMaxBytes = 32 * 1024

async function relayEventStream(
  writer: ClientWriter,
  options: RelayOptions,
  usage: RelayedUsage | undefined,
  filter: ChunkFilter | undefined,
): Promise<RelayResult> {
  const hold = options.settleFirst === true
  // Without a hold the tap reads each chunk when the next one arrives (after it was written), and the last once the
  // answer has ended: a short answer's bytes leave before they are parsed for usage (docs/proxy.md, the hot path).
  const tap = new TapBehind(createSseTap(usage && ((event) => usage.onEvent(event))), hold)
  const unregister = options.openStreams?.add(() => {
    const message =
      'ctxgate is shutting down (its shutdown grace is over) and ended this stream; send the request again.'
    writer.cut((tap.atEventBoundary ? '' : '\n\n') + options.errorShape.streamEvent('upstream_unreachable', message))
    options.abortUpstream()
  })
  try {
    // Not joined when held: joined, the events before the one that completes the usage would share its buffer and
    // wait with it for the store; one by one, they go out while it is recorded.
    await forEachChunk(
      options.reply,
      writer,
      (chunk) => {
        tap.push(chunk)
        // With a shared store, the chunk that completes the usage goes out only after it is recorded.
        if (hold && usage && !usage.settled && usage.complete())
          return usage.settle().then(() => writer.send(filter ? filter.push(chunk) : chunk))
        return writer.send(filter ? filter.push(chunk) : chunk)
      },
      !hold,
    )
  } catch (error) {
    if (writer.wasCut) return { ...writer.result('shutdown', true, tap.eventCount), errorEventSent: true }
    return endStreamAfterFailure(writer, options, usage, tap, error)
  } finally {
    unregister?.()
  }
  if (writer.wasCut) return { ...writer.result('shutdown', true, tap.eventCount), errorEventSent: true }
  writer.release()
  if (hold) {
    tap.end()
    await usage?.settle()
  }
  if (writer.clientGone) {
    tap.end()
    return writer.result('client_closed', true, tap.eventCount)
  }
  if (filter) await writer.send(filter.end())
  writer.response.end()
  if (!hold) {
    // Nothing waits on it here (a process-local store): read and recorded after the last byte, off the answer's path.
    tap.end()
    await usage?.settle()
  }
  return writer.result('complete', true, tap.eventCount)
}

/** The upstream failed mid-stream: close any half-sent event, then send the provider's own error event. */
async function endStreamAfterFailure(
  writer: ClientWriter,
  options: RelayOptions,
  usage: RelayedUsage | undefined,
  tap: TapBehind,
  error: unknown,
): Promise<RelayResult> {
  writer.release()
  tap.catchUp()
  await usage?.settle()
  if (writer.clientGone || writer.response.destroyed) return writer.result('client_closed', true, tap.eventCount)
  const failure = classifyUpstreamError(error).label
  const frame =
    (tap.atEventBoundary ? '' : '\n\n') +
    options.errorShape.streamEvent(
      'upstream_unreachable',
      `ctxgate: the upstream stream failed mid-way (${failure}); no retry after the first byte.`,
    )
  writer.response.end(frame)
  return { ...writer.result('upstream_failed', true, tap.eventCount), errorEventSent: true, failure }
}

async function relayPlainBody(
  writer: ClientWriter,
  options: RelayOptions,
  usage: RelayedUsage | undefined,
): Promise<RelayResult> {
  const encoding = firstHeader(options.reply.headers['content-encoding'])
  const readable = encoding === undefined || encoding === 'identity'
  // A small plain answer (a JSON message) is copied for its usage; with settleFirst it is also held until complete.
  const copy = new PlainCopy(writer, readable ? (options.plainUpTo ?? 0) : 0, options.settleFirst === true)
  try {
    await forEachChunk(options.reply, writer, (chunk) => copy.write(chunk), true)
  } catch (error) {
    writer.release()
    await usage?.settle()
    if (writer.clientGone || writer.response.destroyed) return writer.result('client_closed', false, 0)
    // A JSON body cut short cannot be repaired; ending the socket (after what arrived) makes the client see the cut.
    await copy.flushHeld()
    endConnection(writer.response)
    return { ...writer.result('upstream_failed', false, 0), failure: classifyUpstreamError(error).label }
  }
  writer.release()
  if (copy.hold) await usage?.settle(copy.body())
  if (writer.clientGone) return writer.result('client_closed', false, 0)
  const held = copy.flushHeld()
  if (held) await held
  writer.response.end()
  if (!copy.hold) await usage?.settle(copy.body())
  return writer.result('complete', false, 0)
}

/** The copy of a plain body read for its usage; held back from the client until complete when `hold`. */
class PlainCopy {
  readonly #writer: ClientWriter
  #limit: number
  readonly hold: boolean
  #chunks: Buffer[] = []
  #bytes = 0
  #sentUpTo = 0

  constructor(writer: ClientWriter, limit: number, hold: boolean) {
    this.#writer = writer
    this.#limit = limit
    this.hold = hold
  }

  /** Copies and sends a chunk (holds it, with `hold`); a promise only when the client's buffer is full. */
  write(chunk: Buffer): Promise<void> | undefined {
    if (this.#limit === 0) return this.#writer.send(chunk)
    this.#chunks.push(chunk)
    this.#bytes += chunk.length
    if (this.#bytes > this.#limit) {
      // Too big to read for usage: let it all go.
      this.#limit = 0
      return this.#flushAll()
    }
    if (this.hold) return undefined
    this.#sentUpTo = this.#chunks.length
    return this.#writer.send(chunk)
  }

  async #flushAll(): Promise<void> {
    await this.flushHeld()
    this.#chunks = []
    this.#sentUpTo = 0
  }

  /** Sends what is held; a promise only when there was something to send. */
  flushHeld(): Promise<void> | undefined {
    if (this.#sentUpTo === this.#chunks.length) return undefined
    const chunks = this.#chunks.slice(this.#sentUpTo)
    this.#sentUpTo = this.#chunks.length
    return sendInOrder(this.#writer, chunks)
  }

  /** The whole body, when it was small enough to copy. */
  body(): Buffer | undefined {
    return this.#limit > 0 ? Buffer.concat(this.#chunks) : undefined
  }
}

async function sendInOrder(writer: ClientWriter, chunks: readonly Buffer[]): Promise<void> {
  for (const chunk of chunks) await writer.send(chunk)
}

/** Sends what was written, then closes the connection: the client sees the body end short of its length. */
function endConnection(response: ServerResponse): void {
  const socket = response.socket
  if (socket) socket.end()
  else response.destroy()
}
