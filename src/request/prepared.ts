import type { IncomingHttpHeaders } from 'node:http'
import type { CtxgateError } from '../errors.ts'
import type { LengthRefusal } from '../providers/length-refusal.ts'
import type { CompactingClient } from '../model-call/compaction-request.ts'
import type { Usage, UsageReader } from '../model-call/usage.ts'
import type { BatchReason } from '../rewrite/economy/types.ts'
import type { PrefixBreak } from '../rewrite/prefix-break.ts'
import type { Refetch } from '../rewrite/refetch.ts'
import type { RewriteReport } from '../rewrite/types.ts'
import type { Arm } from '../session/holdout-arm.ts'
import type { ClientRuleName } from '../session/client-rule.ts'

/** What the response path needs to count this request (metrics, session totals). */
export interface Accounting {
  readonly model: string
  readonly sessionId?: string
  readonly report?: RewriteReport
  readonly prefixBreak?: PrefixBreak
  /** This request made a new batch of edits, for this reason. */
  readonly batchReason?: BatchReason
  /** The economy's batch on this request: what it predicted, and the client's growth since its previous request (for the realized rewrite). */
  readonly ledgerBatch?: {
    readonly predictedCost: number
    readonly predictedSaving: number
    readonly growthTokens: number
  }
  /** Reads this request was spared by the session's earlier economy batches, by their reason (uncached-input tokens). */
  readonly ledgerSaved?: Readonly<Partial<Record<BatchReason, number>>>
  /** As sent by the client, the request would not have fit the model's window. */
  readonly refusalAvoided: boolean
  /** Cache breakpoints ctxgate added to this request. */
  readonly breakpointsPlaced?: number
  /** The session's holdout arm (docs/holdout.md); absent on requests no session was found for. */
  readonly arm?: Arm
  /** The session's kind (see `sessionKind`), for comparing arms like with like. */
  readonly kind?: string
  /** The client's prompt shrank to under half of its previous one: the client compacted its history. */
  readonly clientCompacted?: boolean
  /** A client whose own compaction rule ctxgate knows (docs/counterfactuals.md), with what its rule needs. */
  readonly client?: { readonly rule: ClientRuleName; readonly window: number; readonly maxOutputTokens: number }
  /** The client asked for a summary to start over from (its own compaction): ctxgate added no cache marker. */
  readonly clientCompaction?: CompactingClient
  /** Calls new in this request that fetch again what ctxgate cleared or folded. */
  readonly refetches?: readonly Refetch[]
}

/**
 * The rewrite engine's side of one request's answer: the usage it reports (read and recorded for
 * calibration) and, when the upstream refused the request for its length, a smaller one to send once.
 */
export interface AnswerFollowUp {
  /** A reader of this format's usage, fresh for one answer. */
  usageReader(): UsageReader
  /** Records the usage the upstream reported (calibration): with a shared store before the client has the whole answer, else just after; never rejects. */
  recordUsage(usage: Usage): Promise<void>
  /** A length refusal of this request may be re-planned (never a refit's, never a server-managed request's). */
  readonly replannable: boolean
  /** The smaller request to send once instead (with the refusal's numbers when it named them), or none. */
  replan(refusal: LengthRefusal): Promise<Prepared | undefined>
  /** No refit will be asked any more: let go of the request's bytes (a WebSocket's are nobody else's). */
  settle?(): void
}

/** A request body ready to send, with what the response path needs to know about it. */
export interface Prepared {
  readonly body: Buffer
  /** Headers to set on the upstream request (the provider's merge rules say which combine with the client's). */
  readonly headers?: Readonly<Record<string, string>>
  /** Fields for the request's log line (the rewrite report). */
  readonly log?: Readonly<Record<string, unknown>>
  /** What the response path asks of the rewrite engine about this request's answer. */
  readonly followUp?: AnswerFollowUp
  readonly accounting?: Accounting
  /** ctxgate asked the stream for usage the client did not ask for: the format's filter hides it again. */
  readonly hideUsageChunk?: boolean
  /**
   * Only when the caller asked for it (`PrepareOptions.recordsAfterDispatch`) and the body goes as the
   * client sent it: makes the request's records (its log fields, accounting and the conversation's
   * saved state) and resolves to this request with them. Call it once the body is dispatched, and
   * await it before anything reads them (the client's response headers, the request's record, a refit).
   */
  readonly afterDispatch?: () => Promise<Prepared>
}

/** How the caller of a `PrepareBody` will use what it prepares. */
export interface PrepareOptions {
  /** The caller runs `Prepared.afterDispatch` right after it dispatches the body, and awaits it before reading the records. */
  readonly recordsAfterDispatch?: boolean
}

export type PrepareResult =
  | { readonly kind: 'forward'; readonly prepared: Prepared }
  /** ctxgate answers itself, in the provider's shape, and does not call the upstream. */
  | {
      readonly kind: 'reject'
      readonly error: CtxgateError
      readonly log?: Readonly<Record<string, unknown>>
      readonly accounting?: Accounting
    }

/** Turns the client's body into what to send; throwing means "send the original" (fail open). */
export type PrepareBody = (
  body: Buffer,
  incoming: IncomingHttpHeaders,
  options?: PrepareOptions,
) => Promise<PrepareResult>
