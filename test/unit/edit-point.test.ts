import { describe, expect, it } from 'vitest'
import { decideBatch } from '../../src/rewrite/economy/decide.ts'
import { batchStart, reachBackValue } from '../../src/rewrite/economy/edit-point.ts'
import { defaultMultipliers } from '../../src/billing/prices.ts'
import { defaultEconomyPolicy, type ConversationCost, type MessageCost } from '../../src/rewrite/economy/types.ts'
import { runRewritten, viewOf, viewRound } from '../helpers/chat-view.ts'

const forty = { read: 0.1, write: 1.25, requestsAhead: 40 }

/** batchStart over candidates given as lists of what each saves and the tokens before it. */
const startOf = (saved: readonly number[], position: readonly number[], prices = forty): number =>
  batchStart(
    saved.length,
    (index) => saved[index] ?? 0,
    (index) => position[index] ?? 0,
    prices,
  )

describe('reaching back to an old result', () => {
  it('pays when what it saves over the requests ahead covers rewriting what lies after it (worked example)', () => {
    // Saving 50 tokens on each of 40 requests at 0.1: 200. Rewriting 100 tokens costs 115, 200 tokens 230.
    expect(reachBackValue(50, 100, forty)).toBeCloseTo(200 - 115)
    expect(reachBackValue(50, 200, forty)).toBeCloseTo(200 - 230)
    // Nothing in between: always worth it.
    expect(reachBackValue(1, 0, forty)).toBeGreaterThan(0)
  })

  it('starts a batch after a small old result that sits far from the next one, and counts a result at its note size', () => {
    // A saves 40 at 1,000; B saves 6,000 at 13,000; C at 19,200.
    const saved = [40, 6_000, 5_000]
    const position = [1_000, 13_000, 19_200]
    // A: 13,000 − 1,000 − 40 = 11,960 rewritten (13,754) against 160 saved: skipped.
    // B: 19,200 − 13,000 − 6,000 = 200 rewritten (230) against 24,000 saved: the batch starts there.
    expect(startOf(saved, position)).toBe(1)
    // With A as large as B, A pays for itself.
    expect(startOf([6_000, 6_000, 5_000], position)).toBe(0)
  })
  it('weighs a cluster of small results together: two close to each other, both far before the rest, stay whole', () => {
    // 20 tokens saved each, 100 tokens apart, then 20,000 tokens before a 2,000-token result.
    const saved = [20, 20, 2_000]
    const position = [0, 100, 20_120]
    expect(startOf(saved, position)).toBe(2)
  })

  it('counts a large result at its note size: right after it comes the next, so even two requests ahead repay it', () => {
    // A saves 6,000 at 1,000; B follows at 7,200: only A's 16-token note and B's call are rewritten (200 tokens).
    const soon = { ...forty, requestsAhead: 2 }
    expect(startOf([6_000, 6_000], [1_000, 7_200], soon)).toBe(0)
  })
})

describe('batches start where the previous request kept its marker', () => {
  // Head 12,000; task 500; a 60-token result, 8,000 tokens of talk, then 20 rounds of a 2,400-token result.
  function conversation(editableFrom?: number): ConversationCost {
    const messages: MessageCost[] = [{ tokens: 500, results: [] }]
    const round = (index: number, tokens: number): void => {
      messages.push({ tokens: 100, results: [] })
      messages.push({
        tokens: tokens + 10,
        results: [
          { id: `r${index}`, message: messages.length, tokens, replacementTokens: 16, tool: 'bash', round: index },
        ],
      })
    }
    round(0, 60)
    messages.push({ tokens: 8_000, results: [] })
    for (let index = 1; index <= 20; index++) round(index, 2_400)
    const sent = messages.reduce((sum, message) => sum + message.tokens, 12_000)
    return {
      headTokens: 12_000,
      messages,
      clientTokens: sent,
      rounds: 21,
      budget: 176_000,
      cacheTtl: '5m',
      msSinceLastRequest: 30_000,
      ...(editableFrom === undefined ? {} : { editableFrom }),
    }
  }
  const cadence = {
    requestsSoFar: 40,
    expectedRemaining: 40,
    conservativeRemaining: 40,
    averageRemainingWithinCap: 16,
    growthPerRequest: 2_500,
    pausesOver5m: 0,
    pausesOver1h: 0,
  }
  const policy = { ...defaultEconomyPolicy, startTokens: 20_000 }

  it('the economy leaves what lies before the marker whole (r1 is in message 5)', () => {
    const held = decideBatch({ conversation: conversation(5), cadence, prices: defaultMultipliers, policy })
    expect(held).toMatchObject({ kind: 'batch', reason: 'pays_back', editPoint: 5 })
    if (held.kind === 'batch') expect(held.ids).toEqual(Array.from({ length: 17 }, (_, index) => `r${index + 1}`))
    const free = decideBatch({ conversation: conversation(), cadence, prices: defaultMultipliers, policy })
    if (free.kind === 'batch') expect(free.ids[0]).toBe('r0')
    else throw new Error('expected a batch')
  })

  // A 60-token result, 6,000 tokens of talk, then rounds of 1,500-token results; the previous request had one round less.
  const steps = [
    viewRound(60, 'small'),
    { kind: 'turn' as const, tokens: 6_000 },
    ...Array.from({ length: 4 }, (_, index) => viewRound(1_500, `r${index}`)),
  ]
  const view = viewOf(steps)
  const cleared = (outcome: ReturnType<typeof runRewritten>) => Object.keys(outcome.next.decisions.results)
  const before = runRewritten(viewOf(steps.slice(0, -1)), undefined, {
    note: undefined,
    limits: { window: 50_000, budget: 40_000 },
    reachBack: forty,
  })

  it('the marker skips the small result far before the rest', () => {
    expect(before.nextEditResult).toBe('r0')
    expect(before.next.nextEditResult).toBe('r0')
  })

  it('over budget the planner starts at the marker when clearing from there gets under the budget', () => {
    const outcome = runRewritten(
      view,
      { ...before.next, requests: 1 },
      { note: undefined, limits: { window: 20_000, budget: 12_000 }, reachBack: forty },
    )
    expect(cleared(outcome)).not.toContain('small')
    expect(cleared(outcome)).toContain('r0')
    expect(outcome.report.clearedBehindMarker).toBeUndefined()
    // With no marker kept before, it reaches back as it always did.
    expect(
      cleared(runRewritten(view, undefined, { note: undefined, limits: { window: 20_000, budget: 12_000 } })),
    ).toContain('small')
  })

  it('and clears before the marker too when nothing else gets the request under the budget, rather than drop turns', () => {
    const memory = { ...before.next, requests: 1 }
    const roomy = runRewritten(view, memory, {
      note: undefined,
      limits: { window: 20_000, budget: 8_000 },
      reachBack: forty,
    })
    expect(cleared(roomy)).not.toContain('small')
    const budget = roomy.report.estimatedAfter - 1
    const tight = runRewritten(view, memory, { note: undefined, limits: { window: 20_000, budget }, reachBack: forty })
    expect(cleared(tight)).toContain('small')
    expect(tight.report.clearedBehindMarker).toBe(true)
    expect(tight.report.droppedMessages).toBe(0)
    expect(tight.report.estimatedAfter).toBeLessThanOrEqual(budget)
  })
})
