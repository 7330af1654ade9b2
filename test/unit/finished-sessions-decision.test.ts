import { describe, expect, it } from 'vitest'
import { agentFingerprint } from '../../src/providers/adapter-contract.ts'
import { sessionKind } from '../../src/session/session-kind.ts'
import type { Json } from '../helpers/conversations.ts'
import { agentLoop, agentSystem, agentTools, hookOnClock } from '../helpers/hook-on-clock.ts'

const tokenA = 'tenant-a-token-0123456789'
const tokenB = 'tenant-b-token-0123456789'

// With nothing known, a session at request 11 is sure of only ~2 more (the prior's 15% quantile, set here so the
// prior alone cannot pay): too few for a batch to pay back (this one needs ~4.5). Finished sessions of its kind that
// went on to request 25 say 14 more: enough.
const decisionAt = 11
const longRun = 25
const cautious = { economy: { startTokens: 10_000, shortSessionRequests: 4, forecastQuantile: 0.15 } }

describe('finished sessions of the same kind in the economy’s decision', () => {
  it('waits at request 11 on the prior, batches once 5 sessions of its kind went on to 25, waits once they ended at 12', async () => {
    const fresh = hookOnClock({ overrides: cautious })
    expect(await fresh.session('alone', decisionAt)).toEqual({ batch: undefined, waited: 'no_payback_in_time' })

    const taught = hookOnClock({ overrides: cautious })
    for (let index = 0; index < 5; index++) await taught.session(`long-${index}`, longRun)
    taught.idle()
    expect((await taught.session('next', decisionAt)).batch).toMatchObject({ reason: 'pays_back' })

    const { store, session, idle } = hookOnClock({ overrides: cautious })
    for (let index = 0; index < 5; index++) await session(`done-${index}`, decisionAt + 1)
    idle()
    const next = await session('next', decisionAt)
    // Every finished session of its kind had exactly one request left at this point: one more request cannot pay back a rewrite.
    expect(next).toEqual({ batch: undefined, waited: 'no_payback_in_time' })
    const kind = sessionKind('shared', 'claude-sonnet-4-5', agentFingerprint(agentTools, [agentSystem]))
    expect(await store.finishedLengths?.(kind)).toEqual([12, 12, 12, 12, 12])
  })

  it('does not let one tenant’s finished sessions change another tenant’s decision', async () => {
    const { session, idle } = hookOnClock({
      overrides: { ...cautious, auth: { tokens: [tokenA, tokenB] }, metrics: { token: 'admin-token-0123456789' } },
    })
    for (let index = 0; index < 5; index++) await session(`done-${index}`, longRun, { 'x-ctxgate-auth': tokenA })
    idle()
    expect((await session('a-next', decisionAt, { 'x-ctxgate-auth': tokenA })).batch).toMatchObject({
      reason: 'pays_back',
    })
    expect(await session('b-next', decisionAt, { 'x-ctxgate-auth': tokenB })).toEqual({
      batch: undefined,
      waited: 'no_payback_in_time',
    })
  })

  it('does not count another agent’s sessions (other tools) or another model family’s', async () => {
    const { session, idle } = hookOnClock({ overrides: cautious })
    const otherTools = (rounds: number, task: string): Json => ({
      ...agentLoop(rounds, task),
      tools: [...agentTools, { name: 'read_file', input_schema: { type: 'object' } }],
    })
    const otherModel = (rounds: number, task: string): Json => ({
      ...agentLoop(rounds, task),
      model: 'claude-opus-4-5',
    })
    for (let index = 0; index < 5; index++) {
      await session(`tools-${index}`, longRun, {}, otherTools)
      await session(`model-${index}`, longRun, {}, otherModel)
    }
    idle()
    expect(await session('next', decisionAt)).toEqual({ batch: undefined, waited: 'no_payback_in_time' })
  })
})
