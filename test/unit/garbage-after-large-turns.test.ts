import { afterEach, describe, expect, it, vi } from 'vitest'
import { GarbageAfterLargeTurns } from '../../src/websocket/garbage-after-large-turns.ts'

describe('collecting after large socket turns', () => {
  afterEach(() => vi.useRealTimers())

  it('prevents what large turns leave behind from waiting for V8: one collection per allowance of bytes sent, and one once sockets go quiet', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate'] })
    let collections = 0
    const garbage = new GarbageAfterLargeTurns(100, 250, () => void collections++)
    garbage.released(60)
    vi.advanceTimersByTime(100)
    expect(collections).toBe(0)
    // 60 + 60 passes the 100 bytes: a collection now, and the quiet timer is cleared.
    garbage.released(60)
    vi.advanceTimersByTime(0)
    expect(collections).toBe(1)
    vi.advanceTimersByTime(1_000)
    expect(collections).toBe(1)
    garbage.released(10)
    vi.advanceTimersByTime(249)
    expect(collections).toBe(1)
    vi.advanceTimersByTime(1)
    vi.runOnlyPendingTimers()
    expect(collections).toBe(2)
    expect(garbage.collections).toBe(2)
  })

  it('runs a real full collection by default', () => {
    const garbage = new GarbageAfterLargeTurns(1, 1_000)
    garbage.released(1)
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => expect(garbage.collections).toBe(1))
  })
})
