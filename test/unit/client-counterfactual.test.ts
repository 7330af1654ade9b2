import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Usage } from '../../src/model-call/usage.ts'
import { pricesFor } from '../../src/billing/prices.ts'
import { loadConfig } from '../../src/config/load-config.ts'
import {
  summaryTokensEstimate,
  virtualRequest,
  type ServedTurn,
  type VirtualClient,
} from '../../src/session/client-counterfactual.ts'
import { clientRuleOf, clientRules, type ClientRuleName } from '../../src/session/client-rule.ts'

const prices = pricesFor(loadConfig().economy.prices, 'claude-sonnet-4-5')
const usage = (prompt: number): Usage => ({
  inputTokens: 0,
  cacheReadTokens: prompt,
  cacheWrite5mTokens: 0,
  cacheWrite1hTokens: 0,
  outputTokens: 50,
})

/** A loop whose unedited prompt grows by `step` per request from `first`; ctxgate sends it at 1:1 estimates. */
function run(rule: ClientRuleName, requests: number, first: number, step: number, window: number, maxOutput = 32_000) {
  let client: VirtualClient | undefined
  let billed = 0
  let compactions = 0
  const prompts: number[] = []
  for (let index = 0; index < requests; index++) {
    const unedited = first + index * step
    const sent = Math.min(unedited, 50_000)
    const turn: ServedTurn = {
      rule,
      usage: usage(sent),
      sentTokens: sent,
      estimatedBefore: unedited,
      estimatedAfter: sent,
      window,
      maxOutputTokens: maxOutput,
      newBatch: unedited > 50_000,
    }
    const bill = virtualRequest(client, turn, prices)
    client = bill.client
    billed += bill.billedTokens
    if (bill.compacted) compactions++
    prompts.push(client.lastPrompt)
  }
  return { billed, compactions, prompts }
}

describe("each known client's compaction point", () => {
  it('Claude Code (measured): at the window, where the provider refuses it for length', () => {
    expect(clientRules['claude-code'].compactAt(200_000, 32_000)).toBe(200_000)
  })
  it('Codex: 90% of the context window', () => {
    expect(clientRules.codex.compactAt(272_000, 128_000)).toBe(244_800)
  })
  it('opencode: the window less the output limit, capped at 32,000', () => {
    expect(clientRules.opencode.compactAt(200_000, 64_000)).toBe(168_000)
    expect(clientRules.opencode.compactAt(128_000, 16_384)).toBe(111_616)
  })
  it('is found from the client family; unknown clients have none', () => {
    expect(clientRuleOf('Claude Code')?.name).toBe('claude-code')
    expect(clientRuleOf('Codex CLI')?.name).toBe('codex')
    expect(clientRuleOf('opencode')?.name).toBe('opencode')
    expect(clientRuleOf('Anthropic SDK (JS)')).toBeUndefined()
  })
})

describe('the client as it would have run without ctxgate', () => {
  for (const [rule, point] of [
    ['claude-code', 200_000],
    ['codex', 180_000],
    ['opencode', 168_000],
  ] as const) {
    it(`${rule}: never sends a prompt past its point, compacting where its rule says`, () => {
      const { prompts, compactions } = run(rule, 120, 25_000, 5_000, 200_000)
      expect(Math.max(...prompts)).toBeLessThanOrEqual(point)
      // 25k + 119 × 5k = 620k unedited: about (620k − 25k) / (point − 25k − summary) compactions.
      const expected = Math.floor((595_000 - 1) / (point - 25_000 - summaryTokensEstimate - 5_000))
      expect(Math.abs(compactions - expected)).toBeLessThanOrEqual(1)
    })
  }

  it('costs far less than a client that never compacts, and more than nothing', () => {
    const { billed } = run('claude-code', 120, 25_000, 5_000, 200_000)
    // Never compacting: every prompt read from cache, the new 5k written.
    let never = 0
    for (let index = 0; index < 120; index++) never += (25_000 + (index - 1) * 5_000) * 0.1 + 5_000 * 1.25
    expect(billed).toBeLessThan(never)
    expect(billed).toBeGreaterThan(0)
  })

  it('bills a compaction request and a cache rewrite of the smaller prefix where it compacts', () => {
    const before: VirtualClient = {
      lastEstimate: 198_000,
      lastPrompt: 198_000,
      firstPrompt: 25_000,
      compactions: 0,
      lastSent: 40_000,
      growthScale: 1,
    }
    const turn: ServedTurn = {
      rule: 'claude-code',
      usage: usage(40_000),
      sentTokens: 40_000,
      estimatedBefore: 203_000,
      estimatedAfter: 40_000,
      window: 200_000,
      maxOutputTokens: 32_000,
      newBatch: true,
    }
    const bill = virtualRequest(before, turn, prices)
    expect(bill.compacted).toBe(true)
    const kept = 25_000 + summaryTokensEstimate + 5_000
    expect(bill.client.lastPrompt).toBe(kept)
    // The compaction request reads the 198k prefix; the new prompt reads the first prompt and writes the rest.
    expect(bill.billedTokens).toBeCloseTo(198_000 * 0.1 + 25_000 * 0.1 + (kept - 25_000) * 1.25, 6)
    expect(bill.client.lastEstimate).toBe(203_000)
  })

  it('a batch whose estimate of the history comes out smaller still grows the client by a usual request', () => {
    const turn = (before: number, sent: number, newBatch: boolean): ServedTurn => ({
      rule: 'claude-code',
      usage: usage(sent),
      sentTokens: sent,
      estimatedBefore: before,
      estimatedAfter: sent,
      window: 200_000,
      maxOutputTokens: 32_000,
      newBatch,
    })
    let client = virtualRequest(undefined, turn(50_000, 50_000, false), prices).client
    // Three plain requests, each 7,000 more as the upstream counted.
    for (const step of [1, 2, 3])
      client = virtualRequest(client, turn(50_000 + step * 7_000, 50_000 + step * 7_000, false), prices).client
    expect(client.lastPrompt).toBe(71_000)
    // The batch re-measures the history 1,000 smaller than the request before: the client still grew.
    const batched = virtualRequest(client, turn(70_000, 30_000, true), prices).client
    expect(batched.lastPrompt).toBeGreaterThanOrEqual(71_000 + 6_000)
  })

  it("the estimate's wobble is not billed as a rewrite: a prompt that reads smaller, then larger, writes only its growth", () => {
    const turn = (before: number, after: number, sent: number): ServedTurn => ({
      rule: 'claude-code',
      usage: usage(sent),
      sentTokens: sent,
      estimatedBefore: before,
      estimatedAfter: after,
      window: 200_000,
      maxOutputTokens: 32_000,
      newBatch: true,
    })
    const first = virtualRequest(undefined, turn(100_000, 40_000, 40_000), prices)
    // The same history read at a lower ratio of count to estimate: no smaller prompt, nothing written.
    const second = virtualRequest(first.client, turn(100_000, 40_000, 34_000), prices)
    expect(second.client.lastPrompt).toBe(100_000)
    expect(second.billedTokens).toBeCloseTo(100_000 * 0.1, 6)
    const third = virtualRequest(second.client, turn(106_000, 40_000, 40_000), prices)
    expect(third.client.lastPrompt).toBe(106_000)
  })

  it('an unedited prompt is never taken as smaller than what ctxgate sent', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 150_000 }), fc.integer({ min: 1, max: 150_000 }), (sent, before) => {
        const bill = virtualRequest(
          undefined,
          {
            rule: 'codex',
            usage: usage(sent),
            sentTokens: sent,
            estimatedBefore: before,
            estimatedAfter: sent,
            window: 400_000,
            maxOutputTokens: 0,
            newBatch: false,
          },
          prices,
        )
        expect(bill.client.lastPrompt).toBeGreaterThanOrEqual(sent)
      }),
    )
  })
})
