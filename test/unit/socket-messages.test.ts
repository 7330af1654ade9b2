import { describe, expect, it } from 'vitest'
import { sharedAboveBytes, withInput } from '../../src/websocket/socket-messages.ts'

describe('writing a socket conversation as one request', () => {
  const fields = { type: 'response.create', model: 'gpt-4.1', input: null, store: false }
  const items = (count: number, size: number): Buffer[] =>
    Array.from({ length: count }, (_, index) =>
      Buffer.from(JSON.stringify({ type: 'message', content: `${index}`.padEnd(size, 'x') })),
    )
  const list = (parts: Buffer[]): Buffer[] => [
    Buffer.from('['),
    ...parts.flatMap((part, index) => (index === 0 ? [part] : [Buffer.from(','), part])),
    Buffer.from(']'),
  ]

  it('writes the fields with the input in its place, whatever its size', () => {
    for (const parts of [items(2, 10), items(40, 10_000)]) {
      const written = withInput(fields, list(parts))
      expect(JSON.parse(written.toString('utf8'))).toEqual({
        ...fields,
        input: parts.map((part) => JSON.parse(part.toString('utf8')) as unknown),
      })
    }
  })

  it('prevents a rewrite worker copying a large conversation: one of sharedAboveBytes or more is written in shared memory, a short one is not', () => {
    const large = withInput(fields, list(items(40, 10_000)))
    const short = withInput(fields, list(items(2, 10)))
    expect(large.length).toBeGreaterThanOrEqual(sharedAboveBytes)
    expect(large.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(large.byteLength).toBe(large.buffer.byteLength)
    expect(short.buffer).not.toBeInstanceOf(SharedArrayBuffer)
  })
})
