import type { Usage } from '../model-call/usage.ts'
import { billedDollars, billedInputTokens, type ModelPrices } from '../billing/prices.ts'
import type { RewriteReport } from '../rewrite/types.ts'

/** What one answer cost, and what it would have cost had ctxgate edited nothing (an estimate). */
export interface BilledTurn {
  /** Prompt tokens in uncached-input equivalents, rounded. */
  readonly billedTokens: number
  readonly uneditedBilledTokens: number
  /** Millionths of a dollar (prompt and output), 0 when the model's price is unknown. */
  readonly microDollars: number
  readonly uneditedMicroDollars: number
  readonly priced: boolean
}

/**
 * What one answer cost and what it would have cost unedited, unrounded: the one definition that the
 * session totals (`/ctxgate/sessions`, rounded by `billedTurn`) and the live page's totals both read.
 */
export interface TurnCost {
  /** Prompt tokens in uncached-input equivalents. */
  readonly billedTokens: number
  readonly uneditedBilledTokens: number
  /** Dollars (prompt and output); null when the model's price is unknown. */
  readonly dollars: number | null
  readonly uneditedDollars: number | null
}

/** The client's own rule's bill without ctxgate (session/client-counterfactual.ts), for known clients. */
export interface VirtualCost {
  readonly billedTokens: number
  readonly dollars: number | null
}

/**
 * Unedited, the prompt would have been larger by ctxgate's own estimate (before ÷ after); billed
 * at the same mix of reads and writes. A known client's own rule (it compacts) replaces that estimate.
 */
export function turnCost(
  usage: Usage,
  estimates: { readonly estimatedBefore?: number; readonly estimatedAfter?: number } | undefined,
  prices: ModelPrices,
  virtual?: VirtualCost,
): TurnCost {
  const scale = uneditedScale(estimates)
  const billed = billedInputTokens(usage, prices)
  return {
    billedTokens: billed,
    uneditedBilledTokens: virtual ? virtual.billedTokens : billed * scale,
    dollars: billedDollars(usage, prices),
    uneditedDollars: virtual ? virtual.dollars : billedDollars(usage, prices, scale),
  }
}

/** The turn's cost as the session totals keep it: whole tokens and whole millionths of a dollar. */
export function billedTurn(
  usage: Usage,
  report: Pick<RewriteReport, 'estimatedBefore' | 'estimatedAfter'> | undefined,
  prices: ModelPrices,
  virtual?: VirtualCost,
): BilledTurn {
  const cost = turnCost(usage, report, prices, virtual)
  return {
    billedTokens: Math.round(cost.billedTokens),
    uneditedBilledTokens: Math.round(cost.uneditedBilledTokens),
    microDollars: cost.dollars === null ? 0 : Math.round(cost.dollars * 1_000_000),
    uneditedMicroDollars: cost.uneditedDollars === null ? 0 : Math.round(cost.uneditedDollars * 1_000_000),
    priced: cost.dollars !== null,
  }
}

/** Tokens ctxgate's folds, clears and drops took out of one request. */
export function tokensRemovedOf(report: Pick<RewriteReport, 'tokensRemoved'> | undefined): number {
  if (!report) return 0
  const removed = report.tokensRemoved
  return removed.fold + removed.clear + removed.drop + (removed.input ?? 0)
}

/** How much larger the prompt was as the client sent it than as ctxgate sent it, by ctxgate's estimates. */
export function uneditedScale(
  report: { readonly estimatedBefore?: number; readonly estimatedAfter?: number } | undefined,
): number {
  const before = report?.estimatedBefore ?? 0
  const after = report?.estimatedAfter ?? 0
  return before > after && after > 0 ? before / after : 1
}
