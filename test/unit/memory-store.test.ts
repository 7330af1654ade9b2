import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { FrozenResult } from '../../src/rewrite/types.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { ConversationState } from '../../src/session/session-store.ts'
import { estimateStateBytes, keepNewestDecisions, newestWithin } from '../../src/session/state-size.ts'

/** A conversation with `count` cleared tool results, as a long run leaves it. */
function stateWith(count: number, prefix = 'toolu_'): ConversationState {
  const results: Record<string, FrozenResult> = {}
  for (let index = 0; index < count; index++)
    results[`${prefix}${String(index).padStart(20, '0')}`] = {
      hash: `h${index.toString(16).padStart(15, '0')}`,
      action: 'clear',
    }
  return { decisions: { results }, requests: 1, lastSeen: 0 }
}

const options = { maxEntries: 10_000, idleTtlMs: 60_000, now: () => 0 }

describe('the memory store’s byte caps', () => {
  it('cuts a state in one pass to what halving its newest decisions until it fits keeps (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 1_024, max: 400_000 }), (count, limit) => {
        const state = stateWith(count)
        let keep = count
        let expected = state
        if (estimateStateBytes(state) > limit)
          while (estimateStateBytes(expected) > limit && keep > 0) {
            keep = Math.floor(keep / 2)
            expected = keepNewestDecisions(state, keep)
          }
        const cut = newestWithin(state, limit)
        expect(cut.state).toEqual(expected)
        expect(cut.bytes).toBe(estimateStateBytes(expected))
        expect(cut.kept).toBe(Object.keys(expected.decisions.results).length)
      }),
      { numRuns: 40, seed: 25 },
    )
  })

  it('counts cleared tool inputs in a state’s size, and cuts them with its results, inputs kept as the newest', async () => {
    const inputs = Object.fromEntries(
      Array.from({ length: 300 }, (_, index) => [
        `call_${String(index).padStart(20, '0')}`,
        { hash: `i${index}`, at: 2 },
      ]),
    )
    const base = stateWith(3_000)
    const state: ConversationState = { ...base, decisions: { ...base.decisions, inputs } }
    expect(estimateStateBytes(state)).toBeGreaterThan(estimateStateBytes(base))
    const limit = estimateStateBytes(state) / 3
    const cut = newestWithin(state, limit)
    expect(cut.bytes).toBeLessThanOrEqual(limit)
    expect(cut.bytes).toBe(estimateStateBytes(cut.state))
    const keptInputs = Object.keys(cut.state.decisions.inputs ?? {})
    expect(keptInputs).toEqual(Object.keys(inputs))
    expect(cut.kept).toBe(keptInputs.length + Object.keys(cut.state.decisions.results).length)
    expect(cut.state).toEqual(keepNewestDecisions(state, cut.kept))
    const store = new MemorySessionStore({ ...options, maxStateBytes: 10_000_000 })
    await store.set('with-inputs', state)
    expect((await store.get('with-inputs'))?.decisions.inputs).toEqual(inputs)
  })

  it('prevents one huge conversation (20,000 cleared results) from holding more than maxStateBytes, newest kept', async () => {
    const trims: number[] = []
    const store = new MemorySessionStore({ ...options, maxStateBytes: 262_144, onTrim: (kept) => trims.push(kept) })
    const huge = stateWith(20_000)
    expect(estimateStateBytes(huge)).toBeGreaterThan(2_000_000)
    await store.set('huge', huge)
    const kept = await store.get('huge')
    expect(store.bytes()).toBeLessThanOrEqual(262_144)
    expect(estimateStateBytes(kept as ConversationState)).toBe(store.bytes())
    const ids = Object.keys(kept?.decisions.results ?? {})
    expect(ids.length).toBe(trims[0])
    expect(ids.length).toBeGreaterThan(0)
    expect(ids.at(-1)).toBe(`toolu_${String(19_999).padStart(20, '0')}`)
  })

  it('prevents many conversations from growing memory past maxTotalBytes: least recently used go first', async () => {
    const one = estimateStateBytes(stateWith(1_000))
    const store = new MemorySessionStore({ ...options, maxStateBytes: 262_144, maxTotalBytes: one * 5 })
    for (let index = 0; index < 5; index++) await store.set(`c${index}`, stateWith(1_000))
    expect(store.size()).toBe(5)
    // c0 is used again, so c1 is now the least recently used.
    await store.get('c0')
    await store.set('c5', stateWith(1_000))
    expect(store.bytes()).toBeLessThanOrEqual(one * 5)
    expect(await store.get('c1')).toBeUndefined()
    expect(await store.get('c0')).toBeDefined()
    expect(await store.get('c5')).toBeDefined()
  })

  it('keeps its byte count exact under any mix of writes, rewrites and expiries', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 3_000 }), fc.boolean()), {
          maxLength: 60,
        }),
        async (steps) => {
          let now = 0
          const store = new MemorySessionStore({
            maxEntries: 6,
            idleTtlMs: 10,
            maxStateBytes: 100_000,
            maxTotalBytes: 250_000,
            now: () => now,
          })
          for (const [key, size, read] of steps) {
            now += 3
            if (read) await store.get(`k${key}`)
            else await store.set(`k${key}`, { ...stateWith(size), lastSeen: now })
            expect(store.size()).toBeLessThanOrEqual(6)
            if (store.size() > 1) expect(store.bytes()).toBeLessThanOrEqual(250_000)
          }
          let total = 0
          for (let key = 0; key < 10; key++) {
            const state = await store.get(`k${key}`)
            if (state) total += estimateStateBytes(state)
          }
          expect(store.bytes()).toBe(total)
        },
      ),
      { numRuns: 60 },
    )
  })
})
