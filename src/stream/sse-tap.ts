import { createParser, type EventSourceMessage } from 'eventsource-parser'

/** Longest SSE event the tap will hold while parsing; longer ones stop the tap, never the stream. */
const maxEventBytes = 16 * 1024 * 1024

export interface SseTap {
  /** Reads a copy of bytes the client is being sent; never changes or holds them. */
  push(chunk: Uint8Array): void
  end(): void
  /** True when the bytes seen so far end on an event boundary (a blank line). */
  readonly atEventBoundary: boolean
  readonly eventCount: number
  /** Set once the tap has given up parsing (hostile or malformed stream); forwarding goes on. */
  readonly failed: boolean
}

export function createSseTap(onEvent: (event: EventSourceMessage) => void = () => undefined): SseTap {
  const decoder = new TextDecoder('utf-8')
  let eventCount = 0
  let failed = false
  // The last four bytes seen: enough to tell whether a blank line just closed an event.
  const tail = new Uint8Array([0, 0, 0x0a, 0x0a])
  // Bytes held for parsing until a line break arrives: events only complete at line ends, so tiny
  // chunks are decoded together (the client has long had them; this is only the copy).
  let pending: Uint8Array[] = []
  let pendingBytes = 0
  const feed = (bytes: Uint8Array): void => {
    try {
      parser.feed(decoder.decode(bytes, { stream: true }))
    } catch {
      failed = true
    }
  }
  const parser = createParser({
    onEvent: (event) => {
      eventCount++
      onEvent(event)
    },
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') failed = true
    },
    maxBufferSize: maxEventBytes,
  })

  return {
    push(chunk) {
      if (chunk.length === 0) return
      const keep = Math.min(4, chunk.length)
      tail.copyWithin(0, keep)
      tail.set(chunk.subarray(chunk.length - keep), 4 - keep)
      if (failed) return
      if (!hasLineBreak(chunk) && pendingBytes + chunk.length < holdLimit) {
        pending.push(chunk)
        pendingBytes += chunk.length
        return
      }
      if (pending.length > 0) {
        pending.push(chunk)
        const joined = Buffer.concat(pending)
        pending = []
        pendingBytes = 0
        feed(joined)
      } else feed(chunk)
    },
    end() {
      if (failed) return
      if (pending.length > 0) feed(Buffer.concat(pending))
      pending = []
      try {
        parser.feed(decoder.decode())
      } catch {
        failed = true
      }
    },
    get atEventBoundary() {
      return endsWithBlankLine(tail)
    },
    get eventCount() {
      return eventCount
    },
    get failed() {
      return failed
    },
  }
}

const LF = 0x0a
const CR = 0x0d
/** Chunks without a line break are held for parsing up to this size. */
const holdLimit = 64 * 1024

function hasLineBreak(chunk: Uint8Array): boolean {
  return chunk.indexOf(LF) !== -1 || chunk.indexOf(CR) !== -1
}

/** `\n\n`, `\r\r`, `\n\r\n` (and so `\r\n\r\n`) close an event. */
function endsWithBlankLine(tail: Uint8Array): boolean {
  const [, b, c, d] = tail
  return (c === LF && d === LF) || (c === CR && d === CR) || (b === LF && c === CR && d === LF)
}
