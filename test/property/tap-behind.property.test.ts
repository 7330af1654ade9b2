import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSseTap } from '../../src/stream/sse-tap.ts'
import { TapBehind } from '../../src/stream/tap-behind.ts'

/** A stream of events with every line ending SSE allows, cut at arbitrary byte offsets. */
const chunkedStream = fc
  .record({
    events: fc.array(
      fc.record({
        name: fc.constantFrom('message_start', 'content_block_delta', 'message_delta', 'ping'),
        data: fc.string({ maxLength: 30 }).map((text) => text.replace(/[\r\n]/g, '_')),
        ending: fc.constantFrom('\n', '\r\n', '\r'),
      }),
      { minLength: 1, maxLength: 10 },
    ),
    cuts: fc.uniqueArray(fc.nat({ max: 2_000 }), { maxLength: 12 }),
  })
  .map(({ events, cuts }) => {
    const bytes = Buffer.from(
      events.map(({ name, data, ending }) => `event: ${name}${ending}data: ${data}${ending}${ending}`).join(''),
    )
    const offsets = [0, ...cuts.map((cut) => cut % bytes.length).toSorted((a, b) => a - b), bytes.length]
    const chunks = offsets.slice(1).map((end, index) => bytes.subarray(offsets[index], end))
    return chunks.filter((chunk) => chunk.length > 0)
  })

function tapWithLog(): { tap: ReturnType<typeof createSseTap>; seen: string[] } {
  const seen: string[] = []
  return { tap: createSseTap((event) => seen.push(`${event.event}:${event.data}`)), seen }
}

describe('a tap fed one chunk behind', () => {
  it('tells every reader what the tap fed directly tells, at every chunk, and ends with the same events', () => {
    fc.assert(
      fc.property(chunkedStream, fc.boolean(), (chunks, hold) => {
        const direct = tapWithLog()
        const behind = tapWithLog()
        const tap = new TapBehind(behind.tap, hold)
        for (const chunk of chunks) {
          direct.tap.push(chunk)
          tap.push(chunk)
          expect(tap.atEventBoundary).toBe(direct.tap.atEventBoundary)
          expect(tap.eventCount).toBe(direct.tap.eventCount)
        }
        direct.tap.end()
        tap.end()
        tap.end()
        expect(behind.seen).toEqual(direct.seen)
        expect(tap.eventCount).toBe(direct.tap.eventCount)
      }),
      { numRuns: 300 },
    )
  })

  it('has not read the last chunk until asked or ended (unless it holds), and reads it once then', () => {
    fc.assert(
      fc.property(chunkedStream, (chunks) => {
        const allButLast = tapWithLog()
        for (const chunk of chunks.slice(0, -1)) allButLast.tap.push(chunk)
        const everything = tapWithLog()
        for (const chunk of chunks) everything.tap.push(chunk)
        everything.tap.end()
        const behind = tapWithLog()
        const tap = new TapBehind(behind.tap, false)
        for (const chunk of chunks) tap.push(chunk)
        expect(behind.seen).toEqual(allButLast.seen)
        tap.end()
        expect(behind.seen).toEqual(everything.seen)
      }),
      { numRuns: 300 },
    )
  })
})
