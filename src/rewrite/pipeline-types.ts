import type { CadenceMemory } from './economy/cadence-memory.ts'
import type { EditPointPrices } from './economy/edit-point.ts'
import type { LedgerEntry, LedgerUpdate } from './economy/ledger.ts'
import type { EconomySettings } from './economy/request-decision.ts'
import type { BatchReason, EconomyDecision, NoBatchReason } from './economy/types.ts'
import type { TokenEstimator } from './estimate.ts'
import type { PrefixBreak } from './prefix-break.ts'
import type { Refetch } from './refetch.ts'
import type { ChatView, Edit, FrozenDecisions, RewritePolicy, RewriteReport } from './types.ts'

/** What a conversation remembers of its previous request, as far as rewriting the next one needs. */
export interface ConversationMemory {
  readonly decisions: FrozenDecisions
  /** Index of the previous request's last message in its rewritten form (for a cache breakpoint). */
  readonly previousTail?: number
  /** The system-prompt note is on for this conversation (from its first edit on, then always). */
  readonly noteOn?: boolean
  /** How many messages the client sent last time, and a signature of them, to tell when it rewrote its history. */
  readonly messageCount?: number
  readonly prefixSignature?: string
  /** Requests the conversation has sent before this one, and when it sent the last (the caller's clock). */
  readonly requests?: number
  readonly lastSeen?: number
  /** What the cadence estimator needs: growth, gaps, the previous unedited size and cache TTL. */
  readonly economy?: CadenceMemory
  /** The model of the previous request (caches are per model). */
  readonly model?: string
  /** The tool result the previous request kept a cache marker just ahead of (see `editableFrom`). */
  readonly nextEditResult?: string
  /** That result was already edited when its entry was written (a bridge, marker-promise.ts): its edit spends nothing. */
  readonly nextEditCleared?: boolean
  /** A below-budget batch was made without the system note, because adding it at the head would not have paid. */
  readonly noteDeferred?: boolean
  /** The regret ledger of the session's economy batches (economy/ledger.ts). */
  readonly ledger?: readonly LedgerEntry[]
}

/** The model's limits as they bear on this request. */
export interface RequestLimits {
  readonly window: number
  /** Prompt tokens to stay under from configuration and headers (output allowance already taken off). */
  readonly budget: number
  /** The prompt limit the upstream itself named in an earlier refusal, if any. */
  readonly learnedLimit?: number
}

/** The note ctxgate adds to the system prompt, and the tokens it adds there as the adapter writes it (0 when already there). */
export interface SystemNoteCost {
  readonly text: string
  readonly tokens: number
  /** `edit-point`: it goes right after the earliest edit, so it costs the cache no more than the edit does. Default `head`. */
  readonly at?: 'head' | 'edit-point'
  /** `first-request`: at the head from the first request, so it never changes the prefix later. Default `first-edit`. */
  readonly from?: 'first-edit' | 'first-request'
}

/**
 * Everything one rewrite decision depends on, by name. Coming inputs (prices per model, the
 * session's cadence: turns so far, time between requests, requests still expected) join here as
 * named fields, so no caller ever passes a positional flag.
 */
export interface PipelineInput {
  readonly view: ChatView
  /** Undefined on a conversation's first request, or when its state could not be read. */
  readonly memory: ConversationMemory | undefined
  readonly limits: RequestLimits
  readonly policy: RewritePolicy
  /** Calibration: estimates times this are an upper bound on the real count. */
  readonly factor: number
  /**
   * The conversation's newest actual ÷ estimate ratio (calibration.ts `countFactorFrom`): the start
   * point is judged on the estimate times this, the count the upstream gives. Absent: `factor`.
   */
  readonly countFactor?: number
  readonly estimator: TokenEstimator
  /** Undefined when the note is turned off. */
  readonly note: SystemNoteCost | undefined
  /** Prices and policy of the cache-priced economy; undefined under `budget-only` (edits only when over budget). */
  readonly economy?: EconomySettings
  /** The caller's clock, in milliseconds: gaps between requests and whether the cache went cold. */
  readonly now?: number
  /** Request counts of finished sessions of the same kind (same agent, model family and tenant), as the store kept them. */
  readonly finishedLengths?: readonly number[]
  /**
   * Prices for where the cache marker ahead of the next edit goes (economy/edit-point.ts): not ahead
   * of small old results too far from the rest to be worth a batch reaching back to. Batches then
   * start at or after the marker the previous request kept (`editableFrom`).
   */
  readonly reachBack?: EditPointPrices
  /** Tokens the adapter's view counts for a drop note beyond its text (`ChatAdapter.dropNoteFraming`). */
  readonly dropNoteFraming: number
}

/** Why this request made a new batch of edits (if it did), and what the economy expected of it. */
export interface BatchAccount {
  readonly reason: BatchReason
  /** Uncached-input tokens the batch costs once (its cache rewrite), as the economy priced it. */
  readonly oneTimeCost?: number
  /** Uncached-input tokens each later request is predicted to save. */
  readonly savingPerRequest?: number
  /** Later requests until the saving pays the one-time cost back. */
  readonly paybackRequests?: number
  /** Requests ahead it was priced over (the conservative forecast). */
  readonly horizon?: number
  /** Saving over that horizon less the one-time cost, in uncached-input tokens. */
  readonly predictedNetSaving?: number
  /** What the client added since its previous request (ctxgate's estimate): the part of the batch request's writes that is not the batch's. */
  readonly growthTokens?: number
}

/** What the session stores for the next request (the tail comes from the adapter, once the edits are written). */
export type NextMemory = Omit<ConversationMemory, 'previousTail'>

export type PipelineOutcome =
  | { readonly kind: 'too-long'; readonly report: RewriteReport; readonly message: string }
  | {
      readonly kind: 'rewritten'
      readonly edits: readonly Edit[]
      readonly report: RewriteReport
      /** The system note goes into this request. */
      readonly noteOn: boolean
      readonly prefixBreak: PrefixBreak | undefined
      /** Where the previous request ended, for a cache breakpoint; undefined after a new cut made it meaningless. */
      readonly previousTail: number | undefined
      /** The tool result this request's new batch starts at, or else the next batch will: a cache breakpoint goes just ahead of it. */
      readonly nextEditResult: string | undefined
      /** With a new batch: where the batch after it will start. Its block is written fresh now, so a marker there writes an entry under either cache-write reading. */
      readonly followingEditResult: string | undefined
      /** As sent by the client, the request would not have fit the model's window. */
      readonly refusalAvoided: boolean
      /** The new batch of edits on this request and why; undefined when none. */
      readonly batch: BatchAccount | undefined
      /** Why the economy made no batch below budget (for the log); undefined when it did, or is off. */
      readonly waited: NoBatchReason | undefined
      /** TTL for the stable head's cache marker. */
      readonly stableTtl: '5m' | '1h'
      /** Calls new in this request that fetch again what ctxgate cleared or folded (refetch.ts). */
      readonly refetches: readonly Refetch[]
      /** The ledger after this request: earlier batches credited with its spared reads, its own batch filed (economy on). */
      readonly ledger: LedgerUpdate | undefined
      readonly next: NextMemory
    }

/**
 * What decides a request's bytes (pipeline.ts `decideRewrite`): the edits, the note, the previous
 * tail and the markers asked for, with what `finishRewrite` needs to complete the outcome.
 */
export type DecidedRewrite =
  | Extract<PipelineOutcome, { kind: 'too-long' }>
  | (Pick<
      Extract<PipelineOutcome, { kind: 'rewritten' }>,
      'kind' | 'edits' | 'report' | 'noteOn' | 'previousTail' | 'nextEditResult' | 'followingEditResult'
    > & { readonly planning: DecidedPlanning })

/** The plan's intermediate facts that the outcome's remaining fields are computed from. */
export interface DecidedPlanning {
  readonly input: PipelineInput
  readonly decisions: FrozenDecisions
  readonly decision: EconomyDecision | undefined
  readonly gapMs: number | undefined
  readonly cold: boolean
  readonly noteTokens: number
  readonly noteHeld: boolean
  /** The marker the previous request's promise or the next edit asks for (before this request's own read). */
  readonly marker: string | undefined
}
