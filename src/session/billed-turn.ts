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
 * Unedited, the prompt would have been larger by ctxgate's own estimate (before ÷ after); billed
 * at the same mix of reads and writes, which is what the live page shows too.
 */
export function billedTurn(
  usage: Usage,
  report: RewriteReport | undefined,
  prices: ModelPrices,
  virtual?: { readonly billedTokens: number; readonly dollars: number | null },
): BilledTurn {
  const scale = uneditedScale(report)
  const billed = billedInputTokens(usage, prices)
  const dollars = billedDollars(usage, prices)
  // A known client's own rule (it compacts) when ctxgate has it; else the prompt scaled up, billed alike.
  const uneditedDollars = virtual ? virtual.dollars : billedDollars(usage, prices, scale)
  return {
    billedTokens: Math.round(billed),
    uneditedBilledTokens: Math.round(virtual ? virtual.billedTokens : billed * scale),
    microDollars: dollars === null ? 0 : Math.round(dollars * 1_000_000),
    uneditedMicroDollars: uneditedDollars === null ? 0 : Math.round(uneditedDollars * 1_000_000),
    priced: dollars !== null,
  }
}

/** How much larger the prompt was as the client sent it than as ctxgate sent it, by ctxgate's estimates. */
export function uneditedScale(
  report: { readonly estimatedBefore?: number; readonly estimatedAfter?: number } | undefined,
): number {
  const before = report?.estimatedBefore ?? 0
  const after = report?.estimatedAfter ?? 0
  return before > after && after > 0 ? before / after : 1
}
