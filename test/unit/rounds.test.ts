import { describe, expect, it } from 'vitest'
import { openaiResponsesAdapter } from '../../src/providers/openai/responses-adapter.ts'
import { describeView } from '../../src/rewrite/economy/from-view.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { planRewrite } from '../../src/rewrite/plan.ts'
import { roundsOf } from '../../src/rewrite/rounds.ts'
import { noDecisions } from '../../src/rewrite/types.ts'
import { testDropNoteFraming, testPolicy } from '../helpers/chat-view.ts'

const estimator = new TokenEstimator()
const output = 'line of build output that is long enough to fold\n'.repeat(80)

/** Three rounds of two parallel calls, as the Responses API lists them: each call its own item. */
function parallelRounds(): Record<string, unknown> {
  const input: unknown[] = [{ role: 'user', content: 'build every package' }]
  for (const round of ['r1', 'r2', 'r3']) {
    for (const call of ['a', 'b'])
      input.push({ type: 'function_call', call_id: `${round}${call}`, name: 'shell', arguments: '{"cmd":"make"}' })
    for (const call of ['a', 'b']) input.push({ type: 'function_call_output', call_id: `${round}${call}`, output })
  }
  return { model: 'gpt-5', input }
}

describe('one definition of a round', () => {
  const view = openaiResponsesAdapter.view(parallelRounds(), estimator)

  it('counts parallel Responses calls as one round', () => {
    const rounds = roundsOf(view.messages)
    expect(rounds.count).toBe(3)
    expect(rounds.callOf.get('r3a')?.round).toBe(2)
    expect(rounds.callOf.get('r3b')?.round).toBe(2)
  })

  it('gives the planner and the economy the same newest round', () => {
    const policy = { ...testPolicy, strategy: 'eager-fold' as const, keepRecentRounds: 1, foldMinTokens: 10 }
    const outcome = planRewrite({
      view,
      decisions: noDecisions,
      budget: 1e9,
      policy,
      factor: 1,
      estimator,
      dropNoteFraming: testDropNoteFraming,
    })
    if (outcome.kind !== 'rewritten') throw new Error(outcome.message)
    const folded = outcome.edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : []))
    expect(folded.sort()).toEqual(['r1a', 'r1b', 'r2a', 'r2b'])

    const cost = describeView({
      view,
      decisions: noDecisions,
      factor: 1,
      estimator,
      extraHeadTokens: 0,
      budget: 1e9,
      cacheTtl: '5m',
      msSinceLastRequest: undefined,
    })
    const newest = cost.messages
      .flatMap((message) => message.results)
      .filter((result) => result.round === cost.rounds - 1)
    expect(newest.map((result) => result.id).sort()).toEqual(['r3a', 'r3b'])
  })
})
