import { createParser } from 'eventsource-parser'
import type { LengthRefusal, StreamRefusalReader } from '../providers/length-refusal.ts'
import { createSseFramer } from '../stream/sse-frames.ts'
import { countWithin, type BodyChunks } from '../upstream/exchange.ts'
import type { UpstreamReply } from '../upstream/send-with-retries.ts'

/** A preamble this large is not one (the service's opening events are a few KiB): stop holding. */
const heldLimitBytes = 1024 * 1024

export type PreambleVerdict =
  /** The stream goes to the client: the held chunks first, as they arrived, then the rest. */
  | { readonly kind: 'relay'; readonly reply: UpstreamReply }
  /** The first event with content refused the request for its length; nothing reached the client. */
  | {
      readonly kind: 'refused'
      readonly refusal: LengthRefusal
      /** The stream as it came, for when no smaller request can be made: relayed as is. */
      readonly reply: UpstreamReply
    }

/**
 * Reads a 200 event stream only as far as its first event after the content-free preamble
 * (`response.created`, `response.in_progress`), which tells whether the request was refused for
 * its length. Chunks are kept as they arrived, so a stream that goes on reaches the client byte
 * for byte and chunk for chunk; only the preamble waits, for as long as the next event takes.
 */
export async function readPastPreamble(reply: UpstreamReply, reader: StreamRefusalReader): Promise<PreambleVerdict> {
  const framer = createSseFramer()
  const held: Buffer[] = []
  let heldBytes = 0
  let chunk = reply.firstChunk
  for (;;) {
    if (chunk === null) return relay(reply, held, reply.rest)
    held.push(chunk)
    heldBytes += chunk.length
    const verdict = judgeFrames(framer.push(chunk), reader)
    if (typeof verdict === 'object') return { ...relay(reply, held, reply.rest), kind: 'refused', ...verdict }
    if (verdict === 'content' || heldBytes > heldLimitBytes) return relay(reply, held, reply.rest)
    try {
      const next = await reply.rest.next()
      chunk = next.done ? null : next.value
    } catch (error) {
      // The failure belongs to the relay: it ends the stream the way it ends any other.
      return relay(reply, held, failingWith(error))
    }
  }
}

type FramesVerdict = 'preamble' | 'content' | { readonly refusal: LengthRefusal }

/** What the frames completed so far say: still preamble, content, or a refusal. */
function judgeFrames(frames: readonly Buffer[], reader: StreamRefusalReader): FramesVerdict {
  for (const frame of frames) {
    const data = eventData(frame)
    // A comment or keep-alive says nothing either way.
    if (data === undefined) continue
    const refusal = reader.read(data)
    if (refusal) return { refusal }
    if (!reader.preamble.has(eventType(data))) return 'content'
  }
  return 'preamble'
}

function eventData(frame: Buffer): string | undefined {
  let data: string | undefined
  const parser = createParser({ onEvent: (event) => (data = event.data) })
  parser.feed(frame.toString('utf8'))
  return data
}

function eventType(data: string): string {
  try {
    const event: unknown = JSON.parse(data)
    return typeof event === 'object' && event !== null && 'type' in event ? String(event.type) : ''
  } catch {
    return ''
  }
}

function relay(
  reply: UpstreamReply,
  held: readonly Buffer[],
  rest: BodyChunks,
): { readonly kind: 'relay'; readonly reply: UpstreamReply } {
  const [first, ...more] = held
  return { kind: 'relay', reply: { ...reply, firstChunk: first ?? null, rest: heldThen(more, rest) } }
}

/** The held chunks, in order, then whatever the stream still has; all of them already received. */
function heldThen(held: readonly Buffer[], rest: BodyChunks): BodyChunks {
  if (held.length === 0) return rest
  let index = 0
  return {
    next: () => {
      const chunk = held[index++]
      return chunk ? Promise.resolve({ value: chunk, done: false }) : rest.next()
    },
    takeQueued: (limits) => {
      if (index >= held.length) return rest.takeQueued(limits)
      const count = countWithin(held, index, limits)
      index += count
      return held.slice(index - count, index)
    },
  }
}

function failingWith(error: unknown): BodyChunks {
  return { next: () => Promise.reject(error as Error), takeQueued: () => [] }
}
