import { describe, expect, it } from 'vitest'
import { agentFingerprint } from '../../src/providers/adapter-contract.ts'
import { sessionKind } from '../../src/session/session-kind.ts'
import type { Json } from '../helpers/conversations.ts'
import { agentLoop, agentSystem, agentTools, hookOnClock } from '../helpers/hook-on-clock.ts'

const tokenA = 'tenant-a-token-0123456789'
const tokenB = 'tenant-b-token-0123456789'

// With nothing known, a session at request 12 expects 12 more (its own Lindy estimate), enough for a batch to pay back.
const decisionAt = 12

describe('finished sessions of the same kind in the economy’s decision', () => {
  it('batches at request 12 on the session’s own estimate, and waits once 5 sessions of its kind ended at 13', async () => {
    const fresh = hookOnClock()
    expect((await fresh.session('alone', decisionAt)).batch).toMatchObject({ reason: 'pays_back' })

    const { store, session, idle } = hookOnClock()
    for (let index = 0; index < 5; index++) await session(`done-${index}`, decisionAt + 1)
    idle()
    const next = await session('next', decisionAt)
    // Every finished session of its kind had exactly one request left at this point: one more request cannot pay back a rewrite.
    expect(next).toEqual({ batch: undefined, waited: 'waiting_pays_more' })
    const kind = sessionKind('shared', 'claude-sonnet-4-5', agentFingerprint(agentTools, [agentSystem]))
    expect(await store.finishedLengths?.(kind)).toEqual([13, 13, 13, 13, 13])
  })

  it('does not let one tenant’s finished sessions change another tenant’s decision', async () => {
    const { session, idle } = hookOnClock({
      overrides: { auth: { tokens: [tokenA, tokenB] }, metrics: { token: 'admin-token-0123456789' } },
    })
    for (let index = 0; index < 5; index++) await session(`done-${index}`, decisionAt + 1, { 'x-ctxgate-auth': tokenA })
    idle()
    expect(await session('a-next', decisionAt, { 'x-ctxgate-auth': tokenA })).toEqual({
      batch: undefined,
      waited: 'waiting_pays_more',
    })
    expect((await session('b-next', decisionAt, { 'x-ctxgate-auth': tokenB })).batch).toMatchObject({
      reason: 'pays_back',
    })
  })

  it('does not count another agent’s sessions (other tools) or another model family’s', async () => {
    const { session, idle } = hookOnClock()
    const otherTools = (rounds: number, task: string): Json => ({
      ...agentLoop(rounds, task),
      tools: [...agentTools, { name: 'read_file', input_schema: { type: 'object' } }],
    })
    const otherModel = (rounds: number, task: string): Json => ({
      ...agentLoop(rounds, task),
      model: 'claude-opus-4-5',
    })
    for (let index = 0; index < 5; index++) {
      await session(`tools-${index}`, decisionAt + 1, {}, otherTools)
      await session(`model-${index}`, decisionAt + 1, {}, otherModel)
    }
    idle()
    expect((await session('next', decisionAt)).batch).toMatchObject({ reason: 'pays_back' })
  })
})
