import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import type { LiveEvent } from '../../src/live/live-event.ts'
import { compactPointOf, countersOf } from '../../src/live/session-summary.ts'
import { zeroUsage } from '../../src/model-call/usage.ts'
import { turnIncrements, withDollars } from '../../src/session/accounting.ts'
import { billedTurn } from '../../src/session/billed-turn.ts'
import { clientRules, proactiveCompactPoint } from '../../src/session/client-rule.ts'
import { pricesFor } from '../../src/billing/prices.ts'

const prices = loadConfig({}).economy.prices

/** One served request, as the live page and the session totals each receive it. */
const turnArbitrary = fc.record({
  model: fc.constantFrom('claude-sonnet-4-5', 'gpt-5.1', 'llama-3'),
  input: fc.integer({ min: 0, max: 5_000 }),
  read: fc.integer({ min: 0, max: 150_000 }),
  write: fc.integer({ min: 0, max: 30_000 }),
  output: fc.integer({ min: 0, max: 4_000 }),
  before: fc.integer({ min: 1, max: 300_000 }),
  ratio: fc.double({ min: 0.1, max: 1, noNaN: true }),
  virtual: fc.option(
    fc.record({
      billedTokens: fc.integer({ min: 0, max: 300_000 }),
      dollars: fc.option(fc.double({ min: 0, max: 5 })),
    }),
  ),
})

describe("a turn's cost, defined once", () => {
  it('is what the live page adds and, rounded, what the session totals add', () => {
    fc.assert(
      fc.property(turnArbitrary, (turn) => {
        const usage = {
          ...zeroUsage,
          inputTokens: turn.input,
          cacheReadTokens: turn.read,
          cacheWrite5mTokens: turn.write,
          outputTokens: turn.output,
        }
        const estimates = {
          estimatedBefore: turn.before,
          estimatedAfter: Math.max(1, Math.round(turn.before * turn.ratio)),
        }
        const virtual = turn.virtual ?? undefined
        const event: LiveEvent = {
          at: 0,
          session: 's',
          client: 'c',
          model: turn.model,
          route: 'anthropic-messages',
          status: 200,
          durationMs: 1,
          usage,
          ...estimates,
          folded: 0,
          cleared: 0,
          dropped: 0,
          tokensRemoved: 0,
          newBatch: false,
          refusalAvoided: false,
          ...(virtual ? { virtual: { ...virtual, compactionAvoided: false } } : {}),
        }
        const live = countersOf(event, false, prices)
        const billed = billedTurn(usage, undefined, pricesFor(prices, turn.model), virtual)
        const session = withDollars(
          turnIncrements({
            model: turn.model,
            usage,
            billed: billedTurn(usage, estimates, pricesFor(prices, turn.model), virtual),
            tokensRemoved: 0,
            prefixBreak: false,
            refusalAvoided: false,
          }),
        )
        expect(Math.round(live.billedTokens)).toBe(session.billedTokens)
        expect(Math.round(live.uneditedBilledTokens)).toBe(session.uneditedBilledTokens)
        expect(Math.round(live.dollars * 1_000_000)).toBe(Math.round(session.dollars * 1_000_000))
        expect(Math.round(live.uneditedDollars * 1_000_000)).toBe(Math.round(session.uneditedDollars * 1_000_000))
        expect(live.unpricedRequests).toBe(session.unpricedTurns)
        expect(billed.billedTokens).toBe(session.billedTokens)
      }),
    )
  })
})

describe('the compaction point of clients without a known rule', () => {
  it("is Claude Code's proactive point, one definition for the page and the client rules", () => {
    for (const window of [40_000, 128_000, 200_000, 1_000_000])
      expect(compactPointOf(window)).toBe(proactiveCompactPoint(window))
    expect(proactiveCompactPoint(200_000)).toBe(167_000)
    expect(proactiveCompactPoint(200_000, 8_000)).toBe(179_000)
    expect(proactiveCompactPoint(33_000)).toBeUndefined()
    expect(compactPointOf(undefined)).toBeUndefined()
    // The measured rule stays the window itself: the proactive point did not fire in Claude Code's runs.
    expect(clientRules['claude-code'].compactAt(200_000, 32_000)).toBe(200_000)
  })
})
