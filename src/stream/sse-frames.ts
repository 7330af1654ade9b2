const lf = 0x0a
const cr = 0x0d

/**
 * Cuts an event stream into whole frames (an event and the blank line that ends it), in bytes, by
 * the SSE rules: a line ends at CRLF, LF or CR. Frames come out byte for byte as they arrived.
 */
export interface SseFramer {
  /** The frames this chunk completed; an unfinished frame waits for the next push. */
  push(chunk: Buffer): Buffer[]
  /** Whatever is left (an unfinished frame), as it arrived. */
  end(): Buffer
}

export function createSseFramer(): SseFramer {
  let pending: Buffer = Buffer.alloc(0)
  // Where the next line starts in `pending`; everything before it belongs to the frame being read.
  let lineStart = 0
  return {
    push(chunk) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      const frames: Buffer[] = []
      let frameStart = 0
      for (;;) {
        const lineEnd = nextLineEnd(pending, lineStart)
        if (lineEnd === undefined) break
        const blank = lineEnd.at === lineStart
        lineStart = lineEnd.next
        if (!blank) continue
        frames.push(pending.subarray(frameStart, lineStart))
        frameStart = lineStart
      }
      pending = pending.subarray(frameStart)
      lineStart -= frameStart
      return frames
    },
    end() {
      const rest = pending
      pending = Buffer.alloc(0)
      lineStart = 0
      return rest
    },
  }
}

/** Where the line starting at `from` ends, and where the next one starts; undefined while it is unfinished. */
function nextLineEnd(bytes: Buffer, from: number): { at: number; next: number } | undefined {
  for (let index = from; index < bytes.length; index++) {
    const byte = bytes[index]
    if (byte === lf) return { at: index, next: index + 1 }
    if (byte !== cr) continue
    // A CR at the end of what arrived may be the first half of a CRLF.
    if (index + 1 >= bytes.length) return undefined
    return { at: index, next: bytes[index + 1] === lf ? index + 2 : index + 1 }
  }
  return undefined
}
