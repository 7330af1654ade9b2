import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FinishedSessions, finishedKept, finishedLengthsOf } from '../../src/session/finished-sessions.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { ConversationState } from '../../src/session/session-store.ts'

const idleTtlMs = 60_000

/** A memory store on a clock the test moves, and one request of a conversation as the rewrite hook records it. */
function storeOnClock(maxEntries = 10_000) {
  const clock = { now: 0 }
  const store = new MemorySessionStore({ maxEntries, idleTtlMs, now: () => clock.now })
  const request = async (key: string, kind: string | null = 'agent-a'): Promise<number> => {
    const before = await store.get(key)
    const requests = (before?.requests ?? 0) + 1
    const state: ConversationState = {
      decisions: { results: {} },
      requests,
      lastSeen: clock.now,
      ...(kind ? { kind } : {}),
    }
    await store.set(key, state)
    return requests
  }
  return { clock, store, request }
}

describe('finished sessions in the memory store', () => {
  it('counts a conversation as finished only once it has been idle past the idle TTL, with its request count', async () => {
    const { clock, store, request } = storeOnClock()
    for (let step = 0; step < 3; step++) {
      clock.now += 1_000
      await request('c1')
    }
    clock.now += idleTtlMs
    expect(await store.finishedLengths('agent-a')).toEqual([])
    clock.now += 1
    expect(await store.finishedLengths('agent-a')).toEqual([3])
    // Counted once: reading again, or the conversation coming back, adds nothing for its first life.
    expect(await store.finishedLengths('agent-a')).toEqual([3])
    expect(await request('c1')).toBe(1)
    expect(await store.finishedLengths('agent-a')).toEqual([3])
  })

  it('counts a conversation that comes back after the idle TTL (found expired on its own read)', async () => {
    const { clock, store, request } = storeOnClock()
    await request('c1')
    await request('c1')
    clock.now += idleTtlMs + 1
    expect(await request('c1')).toBe(1)
    expect(await store.finishedLengths('agent-a')).toEqual([2])
  })

  it('keeps kinds apart and keeps nothing for a conversation without a kind', async () => {
    const { clock, store, request } = storeOnClock()
    await request('a1', 'agent-a')
    await request('b1', 'agent-b')
    await request('b1', 'agent-b')
    await request('n1', null)
    clock.now += idleTtlMs + 1
    expect(await store.finishedLengths('agent-a')).toEqual([1])
    expect(await store.finishedLengths('agent-b')).toEqual([2])
    expect(store.size()).toBe(0)
  })

  it('keeps the newest 50 lengths of a kind', async () => {
    const { clock, store, request } = storeOnClock()
    for (let session = 1; session <= 60; session++) {
      for (let step = 0; step < session; step++) await request(`c${session}`)
      clock.now += idleTtlMs + 1
    }
    const lengths = await store.finishedLengths('agent-a')
    expect(lengths).toHaveLength(finishedKept)
    expect(lengths).toEqual(Array.from({ length: 50 }, (_, index) => index + 11))
  })

  it('does not count a conversation the store dropped for room: it may still be running', async () => {
    const { clock, store, request } = storeOnClock(2)
    await request('c1')
    await request('c2')
    await request('c3')
    expect(await store.get('c1')).toBeUndefined()
    clock.now += idleTtlMs + 1
    expect(await store.finishedLengths('agent-a')).toEqual([1, 1])
  })

  it('counts every conversation that went idle exactly once, under any mix of requests, pauses and kinds', async () => {
    const step = fc.record({
      conversation: fc.integer({ min: 0, max: 5 }),
      advanceMs: fc.constantFrom(1_000, 20_000, idleTtlMs, idleTtlMs + 1, 3 * idleTtlMs),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const { clock, store, request } = storeOnClock()
        const kindOf = (conversation: number) => `kind-${conversation % 2}`
        const expected: Record<string, number[]> = { 'kind-0': [], 'kind-1': [] }
        const live = new Map<number, { requests: number; lastSeen: number }>()
        for (const { conversation, advanceMs } of steps) {
          clock.now += advanceMs
          const life = live.get(conversation)
          if (life && clock.now - life.lastSeen > idleTtlMs) expected[kindOf(conversation)]?.push(life.requests)
          const requests = await request(`c${conversation}`, kindOf(conversation))
          live.set(conversation, { requests, lastSeen: clock.now })
        }
        clock.now += idleTtlMs + 1
        for (const life of live.entries()) expected[kindOf(life[0])]?.push(life[1].requests)
        for (const kind of ['kind-0', 'kind-1']) {
          const lengths = await store.finishedLengths(kind)
          expect(lengths.length).toBeLessThanOrEqual(finishedKept)
          expect(lengths.toSorted((a, b) => a - b)).toEqual((expected[kind] ?? []).toSorted((a, b) => a - b))
        }
      }),
      { numRuns: 80 },
    )
  })
})

describe('the finished-sessions record', () => {
  it('forgets the least recently finished kind past its cap', () => {
    const finished = new FinishedSessions(3)
    for (const kind of ['a', 'b', 'c', 'a', 'd']) finished.record(kind, 4)
    expect(finished.kinds()).toBe(3)
    expect(finished.lengths('b')).toEqual([])
    expect(finished.lengths('a')).toEqual([4, 4])
    expect(finished.lengths('d')).toEqual([4])
  })

  it('reads back only whole, positive request counts, at most 50', () => {
    expect(finishedLengthsOf(['3', 4, '-1', 'x', 2.5, null, 0, '12'])).toEqual([3, 4, 12])
    expect(finishedLengthsOf('12')).toEqual([])
    expect(finishedLengthsOf(Array.from({ length: 70 }, (_, index) => index + 1))).toHaveLength(50)
  })
})
