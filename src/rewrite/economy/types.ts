import { belowBudgetMaxHazard, type ClearRisk } from '../clear-order.ts'
import { cadenceHistory } from './cadence-memory.ts'

/**
 * The provider-neutral description the economy decides on: token counts and positions only, built
 * by the pipeline from its view after frozen decisions were re-applied.
 */

export interface ResultCost {
  /** tool_use_id / tool_call_id / call_id */
  readonly id: string
  /** Index of the message that carries the result. */
  readonly message: number
  readonly tokens: number
  /** Tokens of what would replace it (the cleared note or the fold summary). */
  readonly replacementTokens: number
  /** Name of the tool that produced it ('' when unknown). */
  readonly tool: string
  /** Index of the tool round it answers, counted from the start of the conversation. */
  readonly round: number
  /** Chance per request the agent needs it again once cleared (clear-order.ts); absent: as rarely as any output. */
  readonly hazard?: number
  /** Its risk class and age in tool rounds, which the chance of a re-fetch over the horizon follows. */
  readonly riskAge?: { readonly risk: ClearRisk; readonly age: number }
}

export interface MessageCost {
  readonly tokens: number
  /** Tool results in this message that no earlier decision has edited yet. */
  readonly results: readonly ResultCost[]
}

export interface ConversationCost {
  /** Tokens before the first message: tools, system, framing. */
  readonly headTokens: number
  readonly messages: readonly MessageCost[]
  /**
   * The conversation as the client sent it, before any edit. The quality floor's start point is
   * measured on this, as the provider's own context editing measures its trigger on the whole prompt.
   */
  readonly clientTokens: number
  /** Results in messages before this one are not edited: the previous request kept its cache marker there. */
  readonly editableFrom?: number
  /** Tool rounds in the whole conversation. */
  readonly rounds: number
  /** Prompt tokens the current request may use (the hard limit). */
  readonly budget: number
  /** TTL the cached prefix was written with on the previous request. */
  readonly cacheTtl: '5m' | '1h'
  /** Time since the session's previous request; undefined on its first. */
  readonly msSinceLastRequest: number | undefined
  /** A batch now also switches the system note on, so the rewrite starts in the head, not at the batch. */
  readonly batchRewritesHead?: boolean
  /**
   * Message the previous request kept its cache marker ahead of (0: none, only the head is known cached):
   * a batch reads no further than that. Undefined: priced as reading up to the batch's own edit point.
   */
  readonly markerAt?: number
}

/** `restore`: below budget, only results restored on use (restore.ts), which the economy did not decide. */
export type BatchReason = 'over_budget' | 'pays_back' | 'cold_cache' | 'restore'

export type NoBatchReason =
  | 'under_start'
  | 'short_session'
  | 'nothing_eligible'
  | 'waiting_pays_more'
  /** The batch would need more requests to pay back than the session is forecast, conservatively, to last. */
  | 'no_payback_in_time'
  /** The previous request made a batch: the marker it kept is where the next one may start, from the next request on. */
  | 'marker_moving'

export type EconomyDecision =
  | {
      readonly kind: 'batch'
      readonly reason: BatchReason
      /** Results to replace, oldest first. */
      readonly ids: readonly string[]
      /** Earliest message the batch touches: the cache prefix breaks here. */
      readonly editPoint: number
      readonly tokensRemoved: number
      /** What this batch costs once, in uncached-input tokens (rewriting the prefix after the edit point). */
      readonly oneTimeCost: number
      /** What each later request is predicted to save (the tokens removed, at the price of carrying them). */
      readonly savingPerRequest: number
      /** Later requests until the saving has paid the one-time cost back (Infinity: never). */
      readonly paybackRequests: number
      /** Requests ahead it was priced over: the conservative forecast (cadence.conservativeRemaining). */
      readonly horizon: number
      /** Saving over the horizon less the one-time cost, in uncached-input tokens (no penalty terms: a readable figure). */
      readonly predictedNetSaving: number
      /** Made without switching the system note on: with the note joining the head it would not have paid. */
      readonly noteDeferred?: boolean
    }
  | { readonly kind: 'none'; readonly reason: NoBatchReason }

export interface EconomyPolicy {
  /** Below-budget batches only once the conversation, as the client sends it, is at least this many tokens. */
  readonly startTokens: number
  /** The newest N tool rounds always stay whole. */
  readonly keepRecentRounds: number
  /** Tools whose results are never edited below budget. */
  readonly excludeTools: readonly string[]
  /** Sessions with fewer requests than this are never edited below budget. */
  readonly shortSessionRequests: number
  /** A below-budget batch must save at least this share of its own one-time cost over not editing. */
  readonly margin: number
  /** Requests ahead the path is priced over, at most (bounds the work per request). */
  readonly horizonCap: number
  /** Below budget, results needed again more often than this per request stay whole (clear-order.ts). */
  readonly maxNeedHazard?: number
  /** A below-budget batch must pay back within the remaining length the session reaches with probability 1 − this. */
  readonly forecastQuantile: number
  /**
   * …and within this many requests whatever the forecast: the growth and pauses it prices are measured
   * over the session's last `cadenceHistory` requests, so a payback further out rests on an extrapolation.
   */
  readonly maxPaybackRequests: number
}

export const defaultEconomyPolicy: EconomyPolicy = {
  startTokens: 100_000,
  keepRecentRounds: 3,
  excludeTools: [],
  shortSessionRequests: 8,
  margin: 0.25,
  horizonCap: 200,
  maxNeedHazard: belowBudgetMaxHazard,
  forecastQuantile: 0.3,
  maxPaybackRequests: cadenceHistory,
}
