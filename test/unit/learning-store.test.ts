import { describe, expect, it } from 'vitest'
import { LearningStore, ReplayedLengths } from '../../src/replay/learning-store.ts'
import { noDecisions } from '../../src/rewrite/types.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'

const state = (kind: string | undefined, requests: number) => ({
  decisions: noDecisions,
  requests,
  lastSeen: 0,
  ...(kind === undefined ? {} : { kind }),
})
const store = (learned: ReplayedLengths) =>
  new LearningStore(new MemorySessionStore({ maxEntries: 100, idleTtlMs: 3_600_000, now: () => 0 }), learned)

describe("replay --learn's store", () => {
  it('tells the next run how long the runs before it lasted, by kind, only once they are over', async () => {
    const learned = new ReplayedLengths()
    const first = store(learned)
    // One conversation saved three times (its length is the last count), one of another kind, one of none.
    for (const requests of [1, 2, 3]) await first.set('a', state('shared/claude', requests))
    await first.set('b', state('shared/codex', 7))
    await first.set('c', state(undefined, 4))
    expect(await first.finishedLengths('shared/claude')).toEqual([])
    first.finishRun()
    const second = store(learned)
    expect(await second.finishedLengths('shared/claude')).toEqual([3])
    expect(await second.finishedLengths('shared/codex')).toEqual([7])
    await second.set('d', state('shared/claude', 40))
    second.finishRun()
    expect(await store(learned).finishedLengths('shared/claude')).toEqual([3, 40])
  })

  it('keeps the conversations themselves as the memory store does', async () => {
    const learning = store(new ReplayedLengths())
    await learning.set('a', state('k', 2))
    expect(await learning.get('a')).toMatchObject({ requests: 2, kind: 'k' })
    expect(learning.size()).toBe(1)
  })
})
