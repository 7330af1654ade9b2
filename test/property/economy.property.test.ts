import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Cadence } from '../../src/rewrite/economy/cadence.ts'
import { decideBatch, totalTokens } from '../../src/rewrite/economy/decide.ts'
import { defaultMultipliers } from '../../src/billing/prices.ts'
import type { ConversationCost, EconomyPolicy, MessageCost } from '../../src/rewrite/economy/types.ts'
import { defaultEconomyPolicy } from '../../src/rewrite/economy/types.ts'

const tools = ['bash', 'read', 'memory'] as const

/** A task message, then rounds of one assistant call and a message with 1–3 results. */
const conversationArbitrary = fc
  .record({
    head: fc.integer({ min: 0, max: 20_000 }),
    rounds: fc.array(
      fc.record({
        call: fc.integer({ min: 10, max: 500 }),
        results: fc.array(fc.record({ tokens: fc.integer({ min: 1, max: 8_000 }), tool: fc.constantFrom(...tools) }), {
          minLength: 1,
          maxLength: 3,
        }),
      }),
      { maxLength: 60 },
    ),
    budget: fc.integer({ min: 20_000, max: 200_000 }),
    // Tokens earlier batches already took out: the client's conversation is that much larger than what is sent.
    editedAway: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 150_000 })),
    gapMs: fc.option(fc.integer({ min: 0, max: 2 * 60 * 60_000 }), { nil: undefined }),
    ttl: fc.constantFrom('5m' as const, '1h' as const),
  })
  .map(({ head, rounds, budget, editedAway, gapMs, ttl }): ConversationCost => {
    const messages: MessageCost[] = [{ tokens: 300, results: [] }]
    rounds.forEach((round, index) => {
      messages.push({ tokens: round.call, results: [] })
      const results = round.results.map((result, position) => ({
        id: `r${index}-${position}`,
        message: messages.length,
        tokens: result.tokens,
        replacementTokens: 40,
        tool: result.tool,
        round: index,
      }))
      messages.push({ tokens: results.reduce((sum, result) => sum + result.tokens + 5, 0), results })
    })
    const sent = messages.reduce((sum, message) => sum + message.tokens, head)
    return {
      headTokens: head,
      messages,
      clientTokens: sent + editedAway,
      rounds: rounds.length,
      budget,
      cacheTtl: ttl,
      msSinceLastRequest: gapMs,
    }
  })

const cadenceArbitrary: fc.Arbitrary<Cadence> = fc.record({
  requestsSoFar: fc.integer({ min: 1, max: 200 }),
  expectedRemaining: fc.integer({ min: 0, max: 300 }),
  conservativeRemaining: fc.double({ min: 0, max: 300, noNaN: true }),
  averageRemainingWithinCap: fc.double({ min: 0, max: 16, noNaN: true }),
  growthPerRequest: fc.integer({ min: 0, max: 20_000 }),
  pausesOver5m: fc.double({ min: 0, max: 1, noNaN: true }),
  pausesOver1h: fc.constant(0),
})

const policyArbitrary: fc.Arbitrary<EconomyPolicy> = fc
  .record({
    startTokens: fc.integer({ min: 0, max: 150_000 }),
    keepRecentRounds: fc.integer({ min: 0, max: 5 }),
    excludeTools: fc.subarray([...tools]),
    shortSessionRequests: fc.integer({ min: 0, max: 20 }),
    margin: fc.double({ min: 0, max: 1, noNaN: true }),
    maxPaybackRequests: fc.integer({ min: 1, max: 300 }),
  })
  .map((varied) => ({ ...defaultEconomyPolicy, ...varied }))

describe('economy decision properties', () => {
  it('never makes a below-budget batch with a predicted net loss', () => {
    fc.assert(
      fc.property(conversationArbitrary, cadenceArbitrary, policyArbitrary, (conversation, cadence, policy) => {
        const decision = decideBatch({ conversation, cadence, prices: defaultMultipliers, policy })
        if (decision.kind === 'batch' && decision.reason !== 'over_budget') {
          expect(decision.predictedNetSaving).toBeGreaterThanOrEqual(0)
          expect(decision.predictedNetSaving).toBeGreaterThanOrEqual(policy.margin * decision.oneTimeCost)
        }
      }),
    )
  })

  it('never makes a below-budget batch whose payback needs more requests than the conservative forecast or the cadence window allows', () => {
    fc.assert(
      fc.property(conversationArbitrary, cadenceArbitrary, policyArbitrary, (conversation, cadence, policy) => {
        const decision = decideBatch({ conversation, cadence, prices: defaultMultipliers, policy })
        if (decision.kind === 'batch' && decision.reason !== 'over_budget') {
          expect(decision.paybackRequests).toBeLessThanOrEqual(cadence.conservativeRemaining)
          expect(decision.paybackRequests).toBeLessThanOrEqual(policy.maxPaybackRequests)
          expect(decision.horizon).toBeLessThanOrEqual(cadence.conservativeRemaining)
          expect(decision.predictedNetSaving).toBeLessThanOrEqual(decision.savingPerRequest * decision.horizon)
        }
      }),
    )
  })

  it('never edits a short session, or one the client has not yet grown past the start point, below budget', () => {
    fc.assert(
      fc.property(conversationArbitrary, cadenceArbitrary, policyArbitrary, (conversation, cadence, policy) => {
        const decision = decideBatch({ conversation, cadence, prices: defaultMultipliers, policy })
        const underBudget = totalTokens(conversation) <= conversation.budget
        if (
          underBudget &&
          (cadence.requestsSoFar < policy.shortSessionRequests || conversation.clientTokens < policy.startTokens)
        )
          expect(decision.kind).toBe('none')
      }),
    )
  })

  it('keeps the quality floor: the newest rounds whole, excluded tools untouched, ids real and unique', () => {
    fc.assert(
      fc.property(conversationArbitrary, cadenceArbitrary, policyArbitrary, (conversation, cadence, policy) => {
        const decision = decideBatch({ conversation, cadence, prices: defaultMultipliers, policy })
        if (decision.kind !== 'batch') return
        const results = new Map(
          conversation.messages.flatMap((message) => message.results).map((result) => [result.id, result]),
        )
        expect(new Set(decision.ids).size).toBe(decision.ids.length)
        for (const id of decision.ids) {
          const result = results.get(id)
          expect(result).toBeDefined()
          expect(result?.round).toBeLessThan(conversation.rounds - policy.keepRecentRounds)
          expect(policy.excludeTools).not.toContain(result?.tool)
        }
        expect(decision.editPoint).toBe(results.get(decision.ids[0] as string)?.message)
      }),
    )
  })
})
