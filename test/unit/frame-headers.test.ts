import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FrameHeaders, type FrameHeader } from '../../src/websocket/frame-headers.ts'

/** A frame as RFC 6455 writes it, masked as a client's are (or not), its payload zeros. */
function frame(header: FrameHeader, masked: boolean): Buffer {
  const { opcode, fin, length } = header
  const extended = length < 126 ? Buffer.alloc(0) : Buffer.alloc(length < 65_536 ? 2 : 8)
  if (extended.length === 2) extended.writeUInt16BE(length)
  if (extended.length === 8) extended.writeBigUInt64BE(BigInt(length))
  const short = extended.length === 0 ? length : extended.length === 2 ? 126 : 127
  const head = Buffer.from([(fin ? 0x80 : 0) | opcode, (masked ? 0x80 : 0) | short])
  return Buffer.concat([head, extended, masked ? Buffer.from([1, 2, 3, 4]) : Buffer.alloc(0), Buffer.alloc(length)])
}

const header = fc.record({
  opcode: fc.constantFrom(0, 1, 2, 8, 9, 10),
  fin: fc.boolean(),
  length: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(125, 126, 127, 65_535, 65_536, 70_000)),
})

describe('WebSocket frame headers read from the byte stream', () => {
  it('reads every header, whatever the chunks the stream arrives in', () => {
    fc.assert(
      fc.property(
        fc.array(header, { maxLength: 8 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 70_000 }), { maxLength: 12 }),
        (headers, masked, cuts) => {
          const stream = Buffer.concat(headers.map((one) => frame(one, masked)))
          const reader = new FrameHeaders()
          const found: FrameHeader[] = []
          let at = 0
          for (const cut of cuts) {
            const end = Math.min(stream.length, at + cut)
            found.push(...reader.read(stream.subarray(at, end)))
            at = end
          }
          found.push(...reader.read(stream.subarray(at)))
          expect(found).toEqual(headers)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('knows a 10 MB message from its first 14 bytes', () => {
    const reader = new FrameHeaders()
    const head = frame({ opcode: 1, fin: true, length: 10_000_000 }, true).subarray(0, 14)
    expect(reader.read(head)).toEqual([{ opcode: 1, fin: true, length: 10_000_000 }])
  })
})
