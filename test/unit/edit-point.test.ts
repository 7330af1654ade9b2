import { describe, expect, it } from 'vitest'
import { decideBatch } from '../../src/rewrite/economy/decide.ts'
import { batchStart, worthReachingBack } from '../../src/rewrite/economy/edit-point.ts'
import { anthropicMultipliers } from '../../src/rewrite/economy/prices.ts'
import { defaultEconomyPolicy, type ConversationCost, type MessageCost } from '../../src/rewrite/economy/types.ts'
import { runRewritten, viewOf, viewRound } from '../helpers/chat-view.ts'

const forty = { read: 0.1, write: 1.25, requestsAhead: 40 }

describe('reaching back to an old result', () => {
  it('pays when what it saves over the requests ahead covers rewriting what lies after it (worked example)', () => {
    // Saving 50 tokens on each of 40 requests at 0.1: 200. Rewriting 100 tokens costs 115, 200 tokens 230.
    expect(worthReachingBack(50, 100, forty)).toBe(true)
    expect(worthReachingBack(50, 200, forty)).toBe(false)
    // Nothing in between: always worth it.
    expect(worthReachingBack(1, 0, forty)).toBe(true)
  })

  it('starts a batch after a small old result that sits far from the next one, and counts a result at its note size', () => {
    // A saves 40 at 1,000; B saves 6,000 at 13,000; C at 19,200.
    const saved = [40, 6_000, 5_000]
    const position = [1_000, 13_000, 19_200]
    // A: 13,000 − 1,000 − 40 = 11,960 rewritten (13,754) against 160 saved: skipped.
    // B: 19,200 − 13,000 − 6,000 = 200 rewritten (230) against 24,000 saved: the batch starts there.
    expect(
      batchStart(
        3,
        (index) => saved[index] ?? 0,
        (index) => position[index] ?? 0,
        forty,
      ),
    ).toBe(1)
    // With A as large as B, A pays for itself.
    expect(
      batchStart(
        3,
        (index) => (index === 0 ? 6_000 : (saved[index] ?? 0)),
        (index) => position[index] ?? 0,
        forty,
      ),
    ).toBe(0)
  })
  it('counts a large result at its note size: right after it comes the next, so even two requests ahead repay it', () => {
    // A saves 6,000 at 1,000; B follows at 7,200: only A's 16-token note and B's call are rewritten (200 tokens).
    const soon = { ...forty, requestsAhead: 2 }
    expect(
      batchStart(
        2,
        () => 6_000,
        (index) => [1_000, 7_200][index] ?? 0,
        soon,
      ),
    ).toBe(0)
  })
})

describe('the economy’s batch', () => {
  // Head 12,000; task 500; a 60-token result, then 20 rounds of a 2,400-token result, each behind a 100-token call.
  function conversation(msSinceLastRequest: number): ConversationCost {
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
    // Plenty between the small result and the next one: 8,000 tokens of talk with no tool result.
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
      msSinceLastRequest,
    }
  }
  const cadence = {
    requestsSoFar: 40,
    expectedRemaining: 40,
    growthPerRequest: 2_500,
    pausesOver5m: 0,
    pausesOver1h: 0,
  }
  const policy = { ...defaultEconomyPolicy, startTokens: 20_000 }

  it('leaves a small old result whole rather than rewrite the 8,000 tokens after it', () => {
    const decision = decideBatch({
      conversation: conversation(30_000),
      cadence,
      prices: anthropicMultipliers,
      policy,
      reachBack: forty,
    })
    expect(decision).toMatchObject({ kind: 'batch', reason: 'pays_back' })
    if (decision.kind !== 'batch') return
    expect(decision.ids[0]).toBe('r1')
    expect(decision.ids).toHaveLength(17)
  })

  it('reaches back to it when given no prices to weigh that by (what callers without them get)', () => {
    const decision = decideBatch({ conversation: conversation(30_000), cadence, prices: anthropicMultipliers, policy })
    if (decision.kind === 'batch') expect(decision.ids[0]).toBe('r0')
    else throw new Error('expected a batch')
  })

  it('takes it too when the cache has expired, since everything is written anyway', () => {
    const decision = decideBatch({
      conversation: conversation(6 * 60_000),
      cadence,
      prices: anthropicMultipliers,
      policy,
    })
    expect(decision).toMatchObject({ kind: 'batch', reason: 'cold_cache' })
    if (decision.kind === 'batch') expect(decision.ids[0]).toBe('r0')
  })
})

describe('the budget’s batch (over budget, any strategy)', () => {
  // A 60-token result, 6,000 tokens of talk, then rounds of 1,500-token results; budget 12,000.
  const view = viewOf([
    viewRound(60, 'small'),
    { kind: 'turn', tokens: 6_000 },
    ...Array.from({ length: 4 }, (_, index) => viewRound(1_500, `r${index}`)),
  ])
  const cleared = (outcome: ReturnType<typeof runRewritten>) => Object.keys(outcome.next.decisions.results)

  it('starts after the small old result when clearing the rest gets under the budget', () => {
    const outcome = runRewritten(view, undefined, {
      note: undefined,
      limits: { window: 20_000, budget: 12_000 },
      reachBack: forty,
    })
    expect(cleared(outcome)).not.toContain('small')
    expect(cleared(outcome)).toContain('r0')
    // Without prices it reaches back, as before.
    expect(
      cleared(runRewritten(view, undefined, { note: undefined, limits: { window: 20_000, budget: 12_000 } })),
    ).toContain('small')
  })

  it('clears it too when nothing else gets the request under the budget, rather than drop turns', () => {
    // At 8,000 everything but the small result and the newest round is cleared; one token less than that leaves no other way.
    const roomy = runRewritten(view, undefined, {
      note: undefined,
      limits: { window: 20_000, budget: 8_000 },
      reachBack: forty,
    })
    expect(cleared(roomy)).not.toContain('small')
    const budget = roomy.report.estimatedAfter - 1
    const tight = runRewritten(view, undefined, {
      note: undefined,
      limits: { window: 20_000, budget },
      reachBack: forty,
    })
    expect(cleared(tight)).toContain('small')
    expect(tight.report.droppedMessages).toBe(0)
    expect(tight.report.estimatedAfter).toBeLessThanOrEqual(budget)
  })
})
