import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { LiveEventStreams, type CutReason, type RefusalReason } from '../../src/live/event-stream.ts'
import type { LiveUpdate } from '../../src/live/live-recorder.ts'

/** A response whose reader never reads: every write stays queued in writableLength. */
class UnreadResponse extends EventEmitter {
  writableLength = 0
  destroyed = false
  ended = false
  writeHead(): this {
    return this
  }
  write(chunk: Buffer | string): boolean {
    this.writableLength += Buffer.byteLength(chunk)
    return false
  }
  end(): void {
    this.ended = true
    this.emit('close')
  }
  destroy(): void {
    this.destroyed = true
    this.emit('close')
  }
}

const update = { event: { session: 's' }, summary: { session: 's' } } as unknown as LiveUpdate

function streamsWith(maxBufferedBytes: number, maxStreams = 32) {
  const refused: RefusalReason[] = []
  const cut: CutReason[] = []
  const streams = new LiveEventStreams(
    {
      maxStreams,
      maxBufferedBytes,
      maxBufferedBytesPerStream: 1024 * 1024,
      heartbeatMs: 60_000,
      idleTimeoutMs: 60_000,
    },
    { refused: (reason) => refused.push(reason), cut: (reason) => cut.push(reason) },
  )
  return { streams, refused, cut }
}

describe('LiveEventStreams', () => {
  it('does not let unread snapshots grow past the memory budget: the next open is refused', () => {
    const { streams, refused } = streamsWith(10_000)
    const snapshot = Buffer.alloc(4_000, 'x')
    for (let opened = 0; opened < 2; opened++) {
      const slot = streams.reserve()!
      expect(slot.fits(snapshot.length)).toBe(true)
      slot.open(new UnreadResponse() as unknown as ServerResponse, snapshot)
    }
    const third = streams.reserve()!
    expect(third.fits(snapshot.length)).toBe(false)
    third.release()
    expect(refused).toEqual(['memory'])
    expect(streams.bufferedBytes()).toBe(8_000)
    streams.closeAll()
  })

  it('does not let reserved slots be counted twice or leak when released', () => {
    const { streams, refused } = streamsWith(1_000_000, 2)
    const a = streams.reserve()!
    const b = streams.reserve()!
    expect(streams.reserve()).toBeUndefined()
    a.release()
    a.release()
    const c = streams.reserve()!
    expect(streams.reserve()).toBeUndefined()
    expect(refused).toEqual(['full', 'full'])
    b.release()
    c.release()
  })

  it('does not let the streams together hold more than the budget as updates pile up: the largest are cut', () => {
    const { streams, cut } = streamsWith(100_000)
    const responses = Array.from({ length: 4 }, () => new UnreadResponse())
    for (const response of responses) streams.reserve()!.open(response as unknown as ServerResponse, Buffer.alloc(10))
    for (let sent = 0; sent < 400 && streams.size > 0; sent++) streams.broadcast(update)
    expect(streams.bufferedBytes()).toBeLessThanOrEqual(100_000)
    expect(cut.length).toBeGreaterThan(0)
    expect(cut.every((reason) => reason === 'memory')).toBe(true)
    streams.closeAll()
  })
})
