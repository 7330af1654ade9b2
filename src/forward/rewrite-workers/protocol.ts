import type { Config } from '../../config/schema.ts'
import type { FactorInputs, ConversationRequest } from '../../calibration/calibration.ts'
import type { CompactingClient } from '../../model-call/compaction-request.ts'
import type { SessionHints } from '../../providers/adapter-contract.ts'
import type { WireFormat } from '../../providers/provider-contract.ts'
import type { RequestLimits } from '../../rewrite/pipeline.ts'
import type { ConversationState } from '../../session/session-store.ts'
import type { Json } from '../../util/json.ts'
import type { PlannedOutcome } from '../rewrite-hook/request-accounting.ts'

/**
 * The messages between the main thread and a rewrite worker (docs/memory-budgets.md, large
 * bodies). One job at a time per worker: `read` hands over the body's bytes (transferred, not
 * cloned) and gets back the small facts the main thread's bookkeeping needs; `plan` hands over
 * the state the pipeline reads and gets back the bytes to send and what the record needs; `end`
 * lets the worker drop the parsed body.
 */
export interface RewriteWorkerData {
  readonly config: Readonly<Config>
}

/** Only ctxgate's own headers reach the worker: nothing it does reads the client's keys. */
export type WorkerHeaders = Readonly<Record<string, string | undefined>>

export interface ReadJob {
  readonly kind: 'read'
  readonly format: WireFormat
  readonly body: Uint8Array
  readonly headers: WorkerHeaders
}

export interface PlanJob {
  readonly kind: 'plan'
  readonly scope: string
  readonly state: ConversationState | undefined
  readonly finishedLengths: readonly number[]
  readonly sized: ConversationRequest
  readonly factorInputs: FactorInputs
  /** What the calibration remembers of the upstream's limit for this model and scope (bounded by the planner). */
  readonly rememberedLimit: number | undefined
  /** On a refit: the limit the refusal named. */
  readonly toldLimit: number | undefined
  readonly now: number
  readonly clientSessionId: string
}

export type ToRewriteWorker = (ReadJob | PlanJob | { readonly kind: 'end' }) & { readonly job: number }

/** A body read and viewed: what the main thread needs to find its session and holdout arm. */
export interface ChatFacts {
  readonly kind: 'chat'
  readonly model: string
  readonly maxOutputTokens: number
  readonly serverManaged: boolean | undefined
  readonly hints: SessionHints
  readonly promptTokens: number
  /** Only when the holdout is on (it draws a new session's arm from it). */
  readonly firstUserMessage: string
  /** The body's small top-level fields (what usage readers and refusals read). */
  readonly summary: Json
}

/** A body the hook leaves as sent, and why (the same reasons as on the main thread). */
export interface UntouchedFacts {
  readonly kind: 'untouched'
  readonly reason: string
  readonly model: string
  readonly summary: Json | undefined
}

export type ReadReply = ChatFacts | UntouchedFacts

export interface PlanReply {
  /** The plan's outcome without its edits (they stay in the worker, which writes them). */
  readonly outcome: PlannedOutcome
  readonly factor: number
  readonly limits: RequestLimits
  /** Tokens the system note adds where it goes (0 when off or already there). */
  readonly noteTokens: number
  readonly compaction: CompactingClient | undefined
  /** What to send; undefined means the client's own bytes. Absent on a refusal. */
  readonly body?: Uint8Array | undefined
  readonly headers?: Readonly<Record<string, string>>
  readonly tail?: number
  readonly changed?: boolean
  readonly breakpoints?: number | undefined
  readonly promisedResult?: string | null | undefined
  readonly hideUsageChunk?: boolean
}

export type FromRewriteWorker =
  | { readonly job: number; readonly kind: 'done'; readonly reply: ReadReply | PlanReply }
  | { readonly job: number; readonly kind: 'failed'; readonly error: string }
