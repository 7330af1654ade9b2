import { describe, expect, it } from 'vitest'
import { averageRemainingWithin, conservativeRemaining, quantileOf } from '../../src/rewrite/economy/cadence.ts'
import {
  ledgerKept,
  realizationOf,
  stepLedger,
  summarizeLedger,
  type LedgerEntry,
} from '../../src/rewrite/economy/ledger.ts'
import { realizedRewrite } from '../../src/metrics/record-ledger.ts'
import { defaultMultipliers } from '../../src/billing/prices.ts'
import { zeroUsage } from '../../src/model-call/usage.ts'

const batch = {
  reason: 'pays_back' as const,
  predictedCost: 11_500,
  savingPerRequest: 8_000,
  horizon: 7,
  removed: 80_000,
}

describe('the regret ledger', () => {
  it('files a batch at its request and credits it with the reads each later request is spared', () => {
    const filed = stepLedger(undefined, { request: 12, carryPrice: 0.1, batch })
    expect(filed.savedNow).toEqual({})
    expect(filed.entries).toEqual([{ ...batch, at: 12, requestsAfter: 0, realizedSaved: 0 }])
    const warm = stepLedger(filed.entries, { request: 13, carryPrice: 0.1 })
    expect(warm.savedNow).toEqual({ pays_back: 8_000 })
    // A request that finds its cache expired would have written those tokens: spared at the write price.
    const cold = stepLedger(warm.entries, { request: 14, carryPrice: 1.25 })
    expect(cold.savedNow).toEqual({ pays_back: 100_000 })
    expect(cold.entries[0]).toMatchObject({ requestsAfter: 2, realizedSaved: 108_000 })
  })

  it('sums predictions and what came true, and keeps only the newest batches', () => {
    let entries: readonly LedgerEntry[] = []
    for (let request = 1; request <= ledgerKept + 2; request++)
      entries = stepLedger(entries, { request, carryPrice: 0.1, batch: { ...batch, removed: 10_000 } }).entries
    expect(entries).toHaveLength(ledgerKept)
    expect(entries[0]?.at).toBe(3)
    const summary = summarizeLedger(entries)
    expect(summary).toMatchObject({ batches: ledgerKept, predictedCost: ledgerKept * 11_500 })
    expect(summary.predictedSaving).toBe(ledgerKept * 8_000 * 7)
    // The newest batch (request 10) has earned nothing yet; the one at request k, 1,000 on each of the 10 − k after it.
    expect(summary.realizedSaved).toBe(1_000 * (7 + 6 + 5 + 4 + 3 + 2 + 1 + 0))
    expect(summary.realizedNet).toBe(summary.realizedSaved - summary.predictedCost)
  })

  it('tells how much of the predicted saving per request came true, at most all of it', () => {
    expect(realizationOf(undefined)).toBeUndefined()
    const filed = stepLedger(undefined, { request: 1, carryPrice: 0.1, batch }).entries
    expect(realizationOf(filed)).toBeUndefined()
    // The batch removed fewer tokens than its prediction assumed: half the saving came true.
    const halved = stepLedger([{ ...(filed[0] as LedgerEntry), removed: 40_000 }], { request: 2, carryPrice: 0.1 })
    expect(realizationOf(halved.entries)).toBeCloseTo(0.5, 10)
    expect(realizationOf(stepLedger(filed, { request: 2, carryPrice: 1.25 }).entries)).toBe(1)
  })

  it('reads a malformed stored ledger as empty, entry by entry', () => {
    const stored = [{ at: 1 }, { ...batch, at: 2, requestsAfter: 0, realizedSaved: 0 }, 'x', null]
    expect(stepLedger(stored as unknown as LedgerEntry[], { request: 3, carryPrice: 0.1 }).entries).toHaveLength(1)
  })

  it('prices the realized rewrite as what the upstream wrote beyond the client growth', () => {
    const usage = { ...zeroUsage, inputTokens: 3, cacheWrite5mTokens: 20_000, cacheReadTokens: 60_000 }
    expect(realizedRewrite(usage, 1_003, defaultMultipliers)).toBeCloseTo(19_000 * 1.15, 6)
    expect(realizedRewrite(usage, 50_000, defaultMultipliers)).toBe(0)
  })
})

describe('the conservative forecast of the remaining length', () => {
  it('takes the prior’s low quantile with nothing else known: n·q/(1−q)', () => {
    expect(conservativeRemaining(30, [], 0.15)).toBeCloseTo((30 * 0.15) / 0.85, 10)
    expect(conservativeRemaining(30, [], 0.5)).toBeCloseTo(30, 10)
  })

  it('fits the quantile of what finished sessions of the kind did after n, once there are enough', () => {
    // Ten sessions went on past request 10, by 5, 10, …, 50; the 15% quantile of those is 5 (never interpolated up).
    const lengths = Array.from({ length: 10 }, (_, index) => 10 + 5 * (index + 1))
    expect(conservativeRemaining(10, lengths, 0.15)).toBe(10)
    expect(quantileOf([5, 10, 15, 20, 25, 30, 35, 40, 45, 50], 0.15)).toBe(10)
    // Sessions that stopped at n count as "no more"; shorter ones say nothing about a session still going.
    expect(conservativeRemaining(10, [...lengths, 10, 4, 2], 0.15)).toBe(5)
  })

  it('blends finished sessions in by how many there are', () => {
    const prior = (10 * 0.15) / 0.85
    expect(conservativeRemaining(10, [50, 50], 0.15)).toBeCloseTo(0.4 * 40 + 0.6 * prior, 10)
  })
})

describe('the average remaining length, counted up to a cap', () => {
  it('takes the prior’s mean of min(remaining, cap) with nothing else known: n·ln(1 + cap/n)', () => {
    expect(averageRemainingWithin(16, [], 16)).toBeCloseTo(16 * Math.log(2), 10)
    // A long session is unlikely to end within the cap: its average comes close to the cap itself.
    expect(averageRemainingWithin(1_000, [], 16)).toBeGreaterThan(15.8)
    expect(averageRemainingWithin(1_000, [], 16)).toBeLessThan(16)
  })

  it('fits what finished sessions of the kind did after n, counting those that stopped at n as none', () => {
    // Five sessions went on past request 10, by 5, 10, 20, 30 and 40: counted up to 16 that is 5, 10, 16, 16, 16.
    const lengths = [15, 20, 30, 40, 50]
    expect(averageRemainingWithin(10, lengths, 16)).toBeCloseTo(63 / 5, 10)
    expect(averageRemainingWithin(10, [...lengths, 10, 10, 3], 16)).toBeCloseTo(63 / 7, 10)
    // Fewer than five are blended with the prior by how many there are.
    expect(averageRemainingWithin(10, [50, 50], 16)).toBeCloseTo(0.4 * 16 + 0.6 * 10 * Math.log1p(1.6), 10)
  })
})
