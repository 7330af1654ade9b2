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
  let tail = '\n\n'
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
      tail = (tail + String.fromCharCode(...chunk.subarray(Math.max(0, chunk.length - 4)))).slice(-4)
      if (failed) return
      try {
        parser.feed(decoder.decode(chunk, { stream: true }))
      } catch {
        failed = true
      }
    },
    end() {
      if (failed) return
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

function endsWithBlankLine(tail: string): boolean {
  return tail.endsWith('\n\n') || tail.endsWith('\r\r') || tail.endsWith('\n\r\n') || tail.endsWith('\r\n\r\n')
}
