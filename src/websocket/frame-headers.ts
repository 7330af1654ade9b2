/**
 * The headers of the WebSocket frames in a client's byte stream (RFC 6455 §5.2), payloads skipped,
 * so a message's size is known from its first bytes rather than once ws has received all of it.
 * Reads nothing else and checks nothing: ws reads the frames themselves. Pure: no I/O.
 */

/** One frame's header: its opcode (0 continues a message, 1 text, 2 binary, 8 and up control), whether it ends its message, its payload's length. */
export interface FrameHeader {
  readonly opcode: number
  readonly fin: boolean
  readonly length: number
}

/** The longest header: 2 bytes, an 8-byte length, a 4-byte mask. */
const maxHeaderBytes = 14

export class FrameHeaders {
  readonly #header = Buffer.alloc(maxHeaderBytes)
  #have = 0
  /** Payload bytes of the current frame still to come. */
  #skip = 0

  /** The headers that end in `chunk`, in order; the stream may be cut anywhere between chunks. */
  read(chunk: Buffer): FrameHeader[] {
    const found: FrameHeader[] = []
    let at = 0
    while (at < chunk.length) {
      if (this.#skip > 0) {
        const skipped = Math.min(this.#skip, chunk.length - at)
        this.#skip -= skipped
        at += skipped
        continue
      }
      this.#header[this.#have++] = chunk[at++] as number
      const header = this.#complete()
      if (!header) continue
      found.push(header)
      this.#have = 0
      this.#skip = header.length
    }
    return found
  }

  #complete(): FrameHeader | undefined {
    const header = this.#header
    if (this.#have < 2) return undefined
    const second = header[1] as number
    const short = second & 0x7f
    const extended = short === 126 ? 2 : short === 127 ? 8 : 0
    if (this.#have < 2 + extended + (second & 0x80 ? 4 : 0)) return undefined
    const length = extended === 0 ? short : extended === 2 ? header.readUInt16BE(2) : Number(header.readBigUInt64BE(2))
    const first = header[0] as number
    return { opcode: first & 0x0f, fin: (first & 0x80) !== 0, length }
  }
}
