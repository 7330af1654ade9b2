import { afterEach, describe, expect, it, vi } from 'vitest'
import { GarbageAfterLargeTurns, type Collection } from '../../src/websocket/garbage-after-large-turns.ts'

describe('collecting after large socket turns', () => {
  afterEach(() => vi.useRealTimers())

  it('prevents what large turns leave behind from waiting for V8: one full collection once no large turn was sent for a while, none while they keep coming', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate'] })
    const collections: Collection[] = []
    const garbage = new GarbageAfterLargeTurns(250, (kind) => void collections.push(kind))
    for (let turn = 0; turn < 5; turn++) {
      garbage.released()
      vi.advanceTimersByTime(200)
    }
    expect(collections.filter((kind) => kind === 'full')).toEqual([])
    vi.advanceTimersByTime(50)
    expect(collections.filter((kind) => kind === 'full')).toEqual(['full'])
    vi.advanceTimersByTime(10_000)
    expect(collections.filter((kind) => kind === 'full')).toEqual(['full'])
    garbage.released()
    vi.advanceTimersByTime(250)
    expect(garbage.collections).toBe(2)
  })

  it('prevents young buffers of a large turn from waiting for the quiet: one young-generation collection right after, however many turns let go at once', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate'] })
    const collections: Collection[] = []
    const garbage = new GarbageAfterLargeTurns(250, (kind) => void collections.push(kind))
    garbage.released()
    garbage.released()
    expect(collections).toEqual([])
    vi.advanceTimersByTime(0)
    expect(collections).toEqual(['young'])
    garbage.released()
    vi.advanceTimersByTime(0)
    expect(collections).toEqual(['young', 'young'])
    expect(garbage.youngCollections).toBe(2)
    vi.advanceTimersByTime(250)
    expect(collections).toEqual(['young', 'young', 'full'])
  })

  it('runs real collections by default, and a young one frees a large buffer that died young', async () => {
    const garbage = new GarbageAfterLargeTurns(1_000)
    const before = process.memoryUsage().arrayBuffers
    let buffer: Buffer | undefined = Buffer.allocUnsafeSlow(32 * 1024 * 1024)
    expect(process.memoryUsage().arrayBuffers).toBeGreaterThanOrEqual(before + 32 * 1024 * 1024)
    buffer = undefined
    garbage.released()
    // V8 frees the buffers a young-generation collection found dead on a background task, just after it.
    for (let wait = 0; wait < 40 && process.memoryUsage().arrayBuffers >= before + 32 * 1024 * 1024; wait++)
      await new Promise((resolve) => setTimeout(resolve, 25))
    expect(garbage.youngCollections).toBe(1)
    expect(process.memoryUsage().arrayBuffers).toBeLessThan(before + 32 * 1024 * 1024)
    expect(buffer).toBeUndefined()
    await new Promise((resolve) => setTimeout(resolve, 1_050))
    expect(garbage.collections).toBe(1)
  })
})
