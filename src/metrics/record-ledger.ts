/**
 * The regret ledger's side of one answer: what the economy predicted for the batch this request made,
 * what that batch really cost by the upstream's own counts, and the reads this request was spared by
 * earlier batches — for the metric and the session's totals.
 */
import type { Accounting } from '../request/prepared.ts'
import type { Usage } from '../model-call/usage.ts'
import { writePrice, type ModelPrices } from '../billing/prices.ts'
import type { BatchReason } from '../rewrite/economy/types.ts'
import type { ProxyMetrics } from './proxy-metrics.ts'

export interface LedgerTurn {
  /** 1 when this answer's request made an economy batch. */
  readonly batches: number
  readonly predictedCost: number
  readonly predictedSaving: number
  readonly realizedRewrite: number
  readonly realizedSaved: number
}

/**
 * The rewrite a batch really caused: what the upstream wrote (or took uncached) on that request
 * beyond what the client added since its previous one, at the extra price of a write over a read.
 */
export function realizedRewrite(usage: Usage, growthTokens: number, prices: ModelPrices): number {
  const written = usage.inputTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens
  return Math.max(0, written - Math.max(0, growthTokens)) * (writePrice(prices, '5m') - prices.cacheRead)
}

/** This answer's ledger figures (zeros when it made no batch and followed none). */
export function ledgerTurn(
  accounting: Accounting | undefined,
  usage: Usage | undefined,
  prices: ModelPrices,
): LedgerTurn {
  const batch = accounting?.ledgerBatch
  const saved = Object.values(accounting?.ledgerSaved ?? {}).reduce((sum, tokens) => sum + (tokens ?? 0), 0)
  return {
    batches: batch ? 1 : 0,
    predictedCost: batch?.predictedCost ?? 0,
    predictedSaving: batch?.predictedSaving ?? 0,
    realizedRewrite: batch && usage ? realizedRewrite(usage, batch.growthTokens, prices) : 0,
    realizedSaved: saved,
  }
}

export function recordLedger(
  metrics: ProxyMetrics,
  provider: string,
  accounting: Accounting | undefined,
  turn: LedgerTurn,
): LedgerTurn {
  const reason = accounting?.batchReason
  if (accounting?.ledgerBatch && reason) {
    metrics.economyLedger.inc({ provider, reason, figure: 'predicted_cost' }, turn.predictedCost)
    metrics.economyLedger.inc({ provider, reason, figure: 'predicted_saving' }, turn.predictedSaving)
    metrics.economyLedger.inc({ provider, reason, figure: 'realized_rewrite' }, turn.realizedRewrite)
  }
  for (const [earlier, tokens] of Object.entries(accounting?.ledgerSaved ?? {}) as [BatchReason, number][])
    if (tokens > 0) metrics.economyLedger.inc({ provider, reason: earlier, figure: 'realized_saved' }, tokens)
  return turn
}
