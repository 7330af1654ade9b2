/**
 * The regret ledger: for each below-budget batch, what the economy predicted (its one-time cost and
 * the saving per later request) beside what came true, from ctxgate's own counts — the requests that
 * really followed it and the reads they were spared — up to the session's end. Plain numbers, so the
 * session store keeps it as JSON; anything malformed read back counts as no entry.
 */
import type { BatchReason } from './types.ts'

export interface LedgerEntry {
  /** The session's request number that made the batch. */
  readonly at: number
  readonly reason: BatchReason
  /** Predicted one-time cost, in uncached-input tokens. */
  readonly predictedCost: number
  /** Predicted saving per later request, in uncached-input tokens. */
  readonly savingPerRequest: number
  /** Requests ahead it was priced over (the conservative forecast). */
  readonly horizon: number
  /** Tokens the batch took out of every later request (ctxgate's estimate). */
  readonly removed: number
  /** Later requests that carried the batch's edits so far. */
  readonly requestsAfter: number
  /** Reads those requests were spared, in uncached-input tokens. */
  readonly realizedSaved: number
}

/** Batches kept per session: the newest, enough to learn from, small in every store. */
export const ledgerKept = 8

export interface LedgerStep {
  /** This request's number in the session. */
  readonly request: number
  /** Price of carrying a token on this request: a read when the cache was warm, a write when it had expired. */
  readonly carryPrice: number
  /** The batch this request made, if any (it starts earning on the next request). */
  readonly batch?: Omit<LedgerEntry, 'requestsAfter' | 'realizedSaved' | 'at'>
}

export interface LedgerUpdate {
  readonly entries: readonly LedgerEntry[]
  /** Reads this request was spared by earlier batches, by their reason (uncached-input tokens). */
  readonly savedNow: Readonly<Partial<Record<BatchReason, number>>>
}

/** Credits every earlier batch with this request's spared reads, then files this request's own batch. */
export function stepLedger(previous: readonly LedgerEntry[] | undefined, step: LedgerStep): LedgerUpdate {
  const savedNow: Partial<Record<BatchReason, number>> = {}
  const entries = entriesOf(previous).map((entry) => {
    const saved = entry.removed * step.carryPrice
    savedNow[entry.reason] = (savedNow[entry.reason] ?? 0) + saved
    return { ...entry, requestsAfter: entry.requestsAfter + 1, realizedSaved: entry.realizedSaved + saved }
  })
  if (step.batch) entries.push({ ...step.batch, at: step.request, requestsAfter: 0, realizedSaved: 0 })
  return { entries: entries.slice(-ledgerKept), savedNow }
}

/**
 * What earlier batches really saved per request over what was predicted, over the requests that
 * followed them (at most 1: a forecast that came true is not rewarded beyond itself); undefined with
 * none to judge by. Predictions are made at the warm read price, so a session whose pauses let the
 * cache expire shows a realization above 1, capped.
 */
export function realizationOf(entries: readonly LedgerEntry[] | undefined): number | undefined {
  let predicted = 0
  let realized = 0
  for (const entry of entriesOf(entries)) {
    if (entry.requestsAfter === 0) continue
    predicted += entry.savingPerRequest * entry.requestsAfter
    realized += entry.realizedSaved
  }
  return predicted > 0 ? Math.min(1, realized / predicted) : undefined
}

export interface LedgerSummary {
  readonly batches: number
  readonly predictedCost: number
  /** Predicted saving over each batch's own horizon. */
  readonly predictedSaving: number
  readonly realizedSaved: number
  /** Realized saving less predicted cost: where this is negative the session has not (yet) paid back. */
  readonly realizedNet: number
}

export function summarizeLedger(entries: readonly LedgerEntry[] | undefined): LedgerSummary {
  let predictedCost = 0
  let predictedSaving = 0
  let realizedSaved = 0
  const list = entriesOf(entries)
  for (const entry of list) {
    predictedCost += entry.predictedCost
    predictedSaving += entry.savingPerRequest * entry.horizon
    realizedSaved += entry.realizedSaved
  }
  const round = Math.round
  return {
    batches: list.length,
    predictedCost: round(predictedCost),
    predictedSaving: round(predictedSaving),
    realizedSaved: round(realizedSaved),
    realizedNet: round(realizedSaved - predictedCost),
  }
}

const numericFields = [
  'at',
  'predictedCost',
  'savingPerRequest',
  'horizon',
  'removed',
  'requestsAfter',
  'realizedSaved',
]
const reasons = new Set<string>(['over_budget', 'pays_back', 'cold_cache'])

/** Entries read back from a store: each must carry every field as a finite number and a known reason. */
function entriesOf(value: unknown): LedgerEntry[] {
  if (!Array.isArray(value)) return []
  return value
    .filter(
      (entry): entry is LedgerEntry =>
        typeof entry === 'object' &&
        entry !== null &&
        reasons.has((entry as { reason?: unknown }).reason as string) &&
        numericFields.every((field) => Number.isFinite((entry as Record<string, unknown>)[field])),
    )
    .slice(-ledgerKept)
}
