import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { clearedNote } from '../../src/rewrite/notes.ts'
import type { PlanInput } from '../../src/rewrite/plan.ts'
import type { FrozenDecisions, RewriteOutcome } from '../../src/rewrite/types.ts'
import {
  planView,
  rewrittenOf,
  testPolicy,
  viewOf,
  viewRound,
  viewTokens,
  viewTurn,
  type ViewStep,
} from '../helpers/chat-view.ts'

const estimator = new TokenEstimator()
const noteTokens = estimator.text(clearedNote)

const plan = planView
const rewritten = rewrittenOf

const rounds = (count: number, tokens: number, prefix = 'r'): ViewStep[] =>
  Array.from({ length: count }, (_, index) => viewRound(tokens, `${prefix}${index}`))
const clearedIds = (outcome: RewriteOutcome): string[] =>
  rewritten(outcome).edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : []))

describe('planRewrite', () => {
  // 12 rounds of 1,000-token results: 100 head + 20 task + 12 × (15 + 4 + 3 + 1,000) = 12,384 tokens.
  const twelve = viewOf(rounds(12, 1_000))

  it('changes nothing when the request fits', () => {
    const outcome = rewritten(plan(twelve, 20_000))
    expect(outcome.edits).toEqual([])
    expect(outcome.decisions).toEqual({ results: {} })
    expect(outcome.report).toMatchObject({ estimatedBefore: 12_384, estimatedAfter: 12_384, newBatch: false })
  })

  it('when over budget, clears the oldest results in batches of 4 down to the low-water mark, in one go', () => {
    expect(viewTokens(twelve)).toBe(12_384)
    const outcome = rewritten(plan(twelve, 10_000))
    // One batch of 4 leaves 12,384 − 4 × (1,000 − note) > 6,000 (60 % of 10,000); the second gets under it.
    expect(clearedIds(outcome)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'])
    expect(outcome.report.estimatedAfter).toBe(12_384 - 8 * (1_000 - noteTokens))
    expect(outcome.report.estimatedAfter).toBeLessThanOrEqual(6_000)
    expect(outcome.report).toMatchObject({ cleared: 8, newBatch: true, firstNewEdit: 2, firstEditedMessage: 2 })
    for (const edit of outcome.edits) expect(edit).toMatchObject({ action: 'clear', text: clearedNote })
  })

  it('multiplies estimates by the calibration factor before comparing with the budget', () => {
    expect(rewritten(plan(twelve, 13_000)).edits).toEqual([])
    expect(rewritten(plan(twelve, 13_000, { factor: 1.1 })).report).toMatchObject({
      estimatedBefore: Math.ceil(12_384 * 1.1),
      newBatch: true,
    })
  })

  it('re-applies frozen decisions byte for byte, and adds no batch while under budget', () => {
    const first = rewritten(plan(twelve, 10_000))
    const grown = viewOf([...rounds(12, 1_000), viewRound(1_000, 'r12')])
    const second = rewritten(plan(grown, 10_000, { decisions: first.decisions }))
    expect(second.edits).toEqual(first.edits)
    expect(second.decisions).toEqual(first.decisions)
    expect(second.report).toMatchObject({ newBatch: false, firstNewEdit: -1, firstEditedMessage: 2, cleared: 8 })
  })

  it('detects a result the client changed since it was frozen, and forgets that decision', () => {
    const first = rewritten(plan(twelve, 10_000))
    const edited = viewOf([...rounds(3, 1_000), viewRound(999, 'r3'), ...rounds(12, 1_000).slice(4)])
    expect(edited.messages.length).toBe(twelve.messages.length)
    const second = rewritten(plan(edited, 10_000, { decisions: first.decisions }))
    expect(second.report.clientEdited).toBe(true)
    expect(Object.keys(second.decisions.results)).not.toContain('r3')
    expect(clearedIds(second)).not.toContain('r3')
  })

  it('drops whole old user turns when results are too small to clear, keeping the first message', () => {
    const steps = Array.from({ length: 30 }, (_, index) => [viewRound(20, `t${index}`), viewTurn]).flat()
    const view = viewOf(steps)
    const outcome = rewritten(plan(view, 1_000))
    const drop = outcome.edits.find((edit) => edit.kind === 'drop-messages')
    expect(drop).toMatchObject({ kind: 'drop-messages', from: 1, scope: 'turns' })
    expect(view.messages[drop?.kind === 'drop-messages' ? drop.to : 0]?.startsUserTurn).toBe(true)
    expect(outcome.report.estimatedAfter).toBeLessThanOrEqual(600)
    expect(outcome.decisions.drop).toMatchObject({
      scope: 'turns',
      keepFrom: drop?.kind === 'drop-messages' && drop.to,
    })
  })

  it('drops whole tool rounds inside one long turn (a sub-agent), cutting only before a call', () => {
    const view = viewOf(rounds(40, 20))
    const outcome = rewritten(plan(view, 1_000))
    const drop = outcome.edits.find((edit) => edit.kind === 'drop-messages')
    if (drop?.kind !== 'drop-messages') throw new Error('expected a drop')
    expect(drop.scope).toBe('rounds')
    expect(view.messages[drop.to]?.role).toBe('assistant')
    expect(outcome.report.estimatedAfter).toBeLessThanOrEqual(1_000)
  })

  it('a below-budget batch clears what it takes, long or short, whatever the strategy', () => {
    const view = viewOf([viewRound(1_000, 'long'), viewRound(200, 'short'), ...rounds(4, 10)])
    const actions = (strategy: PlanInput['policy']['strategy']): Record<string, string> =>
      Object.fromEntries(
        rewritten(plan(view, 20_000, { batch: ['long', 'short'], policy: { ...testPolicy, strategy } })).edits.flatMap(
          (edit) => (edit.kind === 'replace-tool-result' ? [[edit.id, edit.action]] : []),
        ),
      )
    expect(actions('batched-fold')).toEqual({ long: 'clear', short: 'clear' })
    expect(actions('clear-only')).toEqual({ long: 'clear', short: 'clear' })
  })

  it('says the conversation is too long when even its newest round with the first message cannot fit', () => {
    const outcome = plan(viewOf([viewRound(5_000, 'huge')]), 3_000)
    expect(outcome.kind).toBe('too-long')
    if (outcome.kind === 'too-long')
      expect(outcome.message).toMatch(/^This conversation got too long .* about 5,142 tokens, more than the 3,000/)
  })
})

describe('tool ids that name Object.prototype members', () => {
  const prototypeIds = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']

  it('are no client edit when nothing was frozen (no lookup through the prototype chain)', () => {
    const view = viewOf(prototypeIds.map((id) => viewRound(50, id)))
    const outcome = rewritten(plan(view, 100_000))
    expect(outcome.report.clientEdited).toBe(false)
    expect(outcome.edits).toEqual([])
  })

  it('are frozen like any other id, through the JSON a shared store keeps', () => {
    const view = viewOf([...prototypeIds.map((id) => viewRound(1_000, id)), ...rounds(2, 1_000)])
    const first = rewritten(plan(view, 5_000))
    expect(clearedIds(first)).toEqual(expect.arrayContaining(['constructor', '__proto__']))
    const stored = JSON.parse(JSON.stringify(first.decisions)) as FrozenDecisions
    expect(Object.keys(stored.results)).toEqual(clearedIds(first))
    const again = rewritten(plan(view, 5_000, { decisions: stored }))
    expect(again.report).toMatchObject({ clientEdited: false, newBatch: false })
    expect(again.edits).toEqual(first.edits)
  })
})
