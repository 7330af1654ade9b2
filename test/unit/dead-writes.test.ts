import { describe, expect, it } from 'vitest'
import { DeadWriteTracker, deadWritesOf, type WriteObservation } from '../../src/model-call/dead-writes.ts'

const minute = 60_000
const answer = (at: number, read: number, written: number, more: Partial<WriteObservation> = {}): WriteObservation => ({
  at,
  read,
  written5m: written,
  written1h: 0,
  ...more,
})

describe('dead cache writes', () => {
  it('counts nothing dead while each request reads what the one before wrote, except the last write when the run ends', () => {
    const dead = deadWritesOf([answer(0, 0, 10_000), answer(1, 10_000, 2_000), answer(2, 12_000, 3_000)])
    expect(dead['session-ended']).toBe(3_000)
    expect(Object.values(dead).reduce((sum, tokens) => sum + tokens, 0)).toBe(3_000)
  })

  it('blames the batch that rewrote the prefix for the tail the previous request wrote', () => {
    // The batch at the third request read only the head (4,000) and wrote the rest again.
    const dead = deadWritesOf([
      answer(0, 0, 10_000),
      answer(1, 10_000, 2_000),
      answer(2, 4_000, 9_000, { ctxgateBatch: true, prefixBreak: 'ctxgate_batch' }),
      answer(3, 13_000, 1_000),
    ])
    // The 2,000 written at request 2 went unread; request 4 reads the batch's new entries, not the old branch.
    expect(dead['ctxgate-batch']).toBe(2_000)
    expect(dead['session-ended']).toBe(1_000)
  })

  it('sorts a client compaction request, a client edit and a one-shot session apart', () => {
    const dead = deadWritesOf([
      answer(0, 0, 10_000),
      answer(1, 10_000, 2_000),
      // The client rewrote its history after 8,000 tokens: request 2's 2,000 are a dead branch.
      answer(2, 8_000, 4_500, { prefixBreak: 'client_edit' }),
      answer(3, 12_500, 500, { clientCompaction: true }),
      // The summary starts a new history: the compaction request's write is never read.
      answer(4, 0, 3_000, { prefixBreak: 'client_edit' }),
      answer(5, 3_000, 1_000),
    ])
    expect(dead['client-edit']).toBe(2_000)
    expect(dead['client-compaction']).toBe(500)
    expect(dead['session-ended']).toBe(1_000)
    expect(deadWritesOf([answer(0, 0, 7_000)])['one-shot']).toBe(7_000)
  })

  it('live: a write is dead once it expired unread, and read entries live on', () => {
    const tracker = new DeadWriteTracker()
    expect(tracker.observe('s', answer(0, 0, 10_000))).toEqual([])
    // Read four minutes later: the entry lives five more minutes from then.
    expect(tracker.observe('s', answer(4 * minute, 10_000, 1_000))).toEqual([])
    // Seven minutes later, after a pause: the 1,000 expired; the first entry was read in time and is not dead.
    expect(tracker.observe('s', answer(11 * minute, 0, 11_500, { prefixBreak: 'ttl_expired' }))).toEqual([
      { cause: 'expired', tokens: 1_000 },
    ])
    // The session goes quiet: the sweep settles its last write as ended.
    expect(tracker.sweep(12 * minute)).toEqual([])
    expect(tracker.sweep(30 * minute)).toEqual([{ cause: 'session-ended', tokens: 11_500 }])
  })

  it('keeps at most the configured number of sessions, settling the least recently active as ended', () => {
    const tracker = new DeadWriteTracker(2)
    tracker.observe('a', answer(0, 0, 5_000))
    tracker.observe('a', answer(1, 5_000, 100))
    tracker.observe('b', answer(2, 0, 1_000))
    expect(tracker.observe('c', answer(3, 0, 1_000))).toEqual([{ cause: 'session-ended', tokens: 100 }])
  })
})
