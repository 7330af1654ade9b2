import { afterEach, describe, expect, it, vi } from 'vitest'
import { GarbageAfterLargeTurns } from '../../src/websocket/garbage-after-large-turns.ts'

describe('collecting after large socket turns', () => {
  afterEach(() => vi.useRealTimers())

  it('prevents what large turns leave behind from waiting for V8: one collection once no large turn was sent for a while, none while they keep coming', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    let collections = 0
    const garbage = new GarbageAfterLargeTurns(250, () => void collections++)
    for (let turn = 0; turn < 5; turn++) {
      garbage.released()
      vi.advanceTimersByTime(200)
    }
    expect(collections).toBe(0)
    vi.advanceTimersByTime(50)
    expect(collections).toBe(1)
    vi.advanceTimersByTime(10_000)
    expect(collections).toBe(1)
    garbage.released()
    vi.advanceTimersByTime(250)
    expect(collections).toBe(2)
    expect(garbage.collections).toBe(2)
  })

  it('runs a real full collection by default', async () => {
    const garbage = new GarbageAfterLargeTurns(1)
    garbage.released()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(garbage.collections).toBe(1)
  })
})
