import { createHash } from 'node:crypto'
import type { Usage } from '../model-call/usage.ts'
import type { PrefixBreak } from '../rewrite/prefix-break.ts'
import type { RewriteReport } from '../rewrite/types.ts'
import { clientFamily } from './client-family.ts'

/**
 * One request as the live page sees it: counts and labels only. No body, no header value beyond a
 * short product token, no key; the session appears as a digest of its id.
 */
export interface LiveEvent {
  /** Epoch milliseconds when the request finished. */
  readonly at: number
  readonly session: string
  readonly client: string
  readonly model: string
  readonly route: string
  readonly status: number
  readonly durationMs: number
  readonly usage?: Usage
  readonly estimatedBefore?: number
  readonly estimatedAfter?: number
  readonly budget?: number
  readonly window?: number
  readonly folded: number
  readonly cleared: number
  readonly dropped: number
  readonly tokensRemoved: number
  /** ctxgate decided a new batch of edits on this request (the cache prefix breaks once here). */
  readonly newBatch: boolean
  readonly batchReason?: string
  readonly prefixBreak?: PrefixBreak
  /** As the client sent it, the request would not have fit the model's window; ctxgate served it. */
  readonly refusalAvoided: boolean
  /** Calls in this request that fetched again what ctxgate had cleared or folded. */
  readonly refetches?: number
}

/** The part of a finished request the live page reads (a subset of the per-request metrics record). */
export interface LiveSource {
  readonly route: string
  readonly status: number
  readonly durationMs: number
  readonly usage?: Usage
  readonly accounting?: {
    readonly model: string
    readonly sessionId?: string
    readonly report?: RewriteReport
    readonly prefixBreak?: PrefixBreak
    readonly batchReason?: string
    readonly refusalAvoided: boolean
    readonly refetches?: readonly unknown[]
  }
}

/** Builds the live event of a model call; undefined for requests that are not model calls. */
export function liveEventFrom(
  source: LiveSource,
  userAgent: string | undefined,
  windowOf: (model: string) => number | undefined,
  at: number,
): LiveEvent | undefined {
  const accounting = source.accounting
  if (!accounting) return undefined
  const client = clientFamily(userAgent)
  const model = labelOf(accounting.model)
  const report = accounting.report
  const window = windowOf(accounting.model)
  const removed = report ? report.tokensRemoved.fold + report.tokensRemoved.clear + report.tokensRemoved.drop : 0
  const reason = report?.newBatch
    ? batchReason(report, window, accounting.refusalAvoided, accounting.batchReason)
    : undefined
  return {
    at,
    // Requests without a session id are grouped per client and model.
    session: sessionDigest(accounting.sessionId ?? `anonymous\u0000${client}\u0000${model}`),
    client,
    model,
    route: source.route,
    status: source.status,
    durationMs: Math.round(source.durationMs * 10) / 10,
    ...(source.usage ? { usage: source.usage } : {}),
    ...(report
      ? { estimatedBefore: report.estimatedBefore, estimatedAfter: report.estimatedAfter, budget: report.budget }
      : {}),
    ...(window === undefined ? {} : { window }),
    folded: report?.folded ?? 0,
    cleared: report?.cleared ?? 0,
    dropped: report?.droppedMessages ?? 0,
    tokensRemoved: removed,
    newBatch: report?.newBatch ?? false,
    ...(reason ? { batchReason: reason } : {}),
    ...(accounting.prefixBreak ? { prefixBreak: accounting.prefixBreak } : {}),
    refusalAvoided: accounting.refusalAvoided && source.status === 200,
    ...(accounting.refetches && accounting.refetches.length > 0 ? { refetches: accounting.refetches.length } : {}),
  }
}

/** Why ctxgate edited here: the window, the budget, or (below both) the economy's reason or folding old outputs early. */
export function batchReason(
  report: RewriteReport,
  window: number | undefined,
  refusalAvoided: boolean,
  economyReason?: string,
): string {
  const kinds = [
    report.folded > 0 ? `folded ${report.folded}` : '',
    report.cleared > 0 ? `cleared ${report.cleared}` : '',
    report.droppedMessages > 0 ? `dropped ${report.droppedMessages} messages` : '',
  ].filter(Boolean)
  const trigger =
    refusalAvoided || (window !== undefined && report.estimatedBefore > window)
      ? 'over the window'
      : report.estimatedBefore > report.budget
        ? 'over budget'
        : economyReason === 'pays_back'
          ? 'pays for its cache rewrite'
          : economyReason === 'cold_cache'
            ? 'cache had expired'
            : 'early fold'
  return kinds.length > 0 ? `${trigger}: ${kinds.join(', ')}` : trigger
}

/** A short stable name for a session id; the id itself may come from a request body. */
export function sessionDigest(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex').slice(0, 12)
}

function labelOf(model: string): string {
  return model.replace(/[^A-Za-z0-9._:/@+-]/g, '_').slice(0, 64) || 'unknown'
}
