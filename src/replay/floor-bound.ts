/**
 * How much of a replayed run the economy's quality floor leaves out of reach: every request before
 * the first one ctxgate may edit below budget is sent as it would be with no economy at all, so
 * their bill is one no policy respecting the floor can lower.
 */
import { billedEquivalentInput } from '../billing/usage-totals.ts'
import type { RequestOutcome } from './request-outcome.ts'

export interface QualityFloor {
  /** Below-budget edits only once ctxgate's estimate of the request reaches this. */
  readonly startTokens: number
  /** Sessions shorter than this are never edited below budget. */
  readonly shortSessionRequests: number
}

export interface FloorShare {
  /** Requests before the first one the floor lets the economy edit. */
  readonly requestsWithin: number
  /** Their billed-equivalent input. */
  readonly billedWithin: number
}

/**
 * Reads the outcomes of a run sent through ctxgate without below-budget edits (`budget-only`), each
 * carrying ctxgate's estimate. A request without an estimate (not rewritten) ends the fixed part, to be safe.
 */
export function withinFloor(outcomes: readonly RequestOutcome[], floor: QualityFloor): FloorShare {
  let billedWithin = 0
  let requestsWithin = 0
  for (const [position, outcome] of outcomes.entries()) {
    const shortSession = position + 1 < floor.shortSessionRequests
    const estimate = outcome.ctxgateEstimate
    if (!shortSession && (estimate === undefined || estimate >= floor.startTokens)) break
    billedWithin += billedEquivalentInput(outcome.usage)
    requestsWithin++
  }
  return { requestsWithin, billedWithin }
}
