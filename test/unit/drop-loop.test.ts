import { describe, expect, it } from 'vitest'
import { DropLoopWatch } from '../../src/metrics/drop-loop.ts'

describe('warning when one session keeps dropping whole rounds', () => {
  it('warns at the threshold and then at each doubling, per session', () => {
    const watch = new DropLoopWatch({ threshold: 3 })
    const warnedAt = Array.from({ length: 30 }, (_, index) => watch.note('a') ?? -index).filter((count) => count > 0)
    expect(warnedAt).toEqual([3, 6, 12, 24])
    expect(watch.note('b')).toBeUndefined()
  })

  it('forgets the least recent session when full, so memory stays bounded', () => {
    const watch = new DropLoopWatch({ threshold: 2, maxSessions: 2 })
    watch.note('a')
    watch.note('b')
    watch.note('c')
    // 'a' was forgotten: its next cut counts as its first.
    expect(watch.note('a')).toBeUndefined()
    expect(watch.note('c')).toBe(2)
  })
})
