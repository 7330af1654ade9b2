import { createHash } from 'node:crypto'
import type { Usage } from '../model-call/usage.ts'
import type { PrefixBreak } from '../rewrite/prefix-break.ts'
import type { RewriteReport } from '../rewrite/types.ts'
import { clientFamily } from './client-family.ts'
import { tokensRemovedOf } from '../session/billed-turn.ts'

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
  /** Of the session's folded and cleared results, those this request's batch decided. */
  readonly batchFolded?: number
  readonly batchCleared?: number
  /** Why a request was not served, in a few words. */
  readonly notServed?: string
  /** Unedited, as the client's own rule would have sent it: billed input, dollars, and whether it compacted first. */
  readonly virtual?: {
    readonly billedTokens: number
    readonly dollars: number | null
    readonly compactionAvoided: boolean
  }
  /** Calls in this request that fetched again what ctxgate had cleared or folded. */
  readonly refetches?: number
}

/** The part of a finished request the live page reads (a subset of the per-request metrics record). */
export interface LiveSource {
  readonly route: string
  readonly status: number
  readonly durationMs: number
  readonly usage?: Usage
  /** `rejected` when ctxgate answered itself. */
  readonly outcome?: string
  /** What the client would have been billed without ctxgate, by its own compaction rule (known clients). */
  readonly virtual?: { readonly billedTokens: number; readonly dollars: number | null; readonly compacted: boolean }
  readonly accounting?: {
    readonly model: string
    readonly sessionId?: string
    readonly report?: RewriteReport
    readonly prefixBreak?: PrefixBreak
    readonly batchReason?: string
    readonly refusalAvoided: boolean
    readonly clientCompacted?: boolean
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
  const reason = report?.newBatch ? batchReason(report, window, accounting.batchReason) : undefined
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
    tokensRemoved: tokensRemovedOf(report),
    newBatch: report?.newBatch ?? false,
    ...(reason ? { batchReason: reason } : {}),
    ...(accounting.prefixBreak ? { prefixBreak: accounting.prefixBreak } : {}),
    refusalAvoided: accounting.refusalAvoided && source.status === 200,
    ...(report?.newBatch
      ? { batchFolded: report.newFolded ?? report.folded, batchCleared: report.newCleared ?? report.cleared }
      : {}),
    ...(source.status === 200 ? {} : { notServed: notServedBecause(source, report, window) }),
    ...(source.virtual
      ? {
          virtual: {
            billedTokens: source.virtual.billedTokens,
            dollars: source.virtual.dollars,
            compactionAvoided: source.virtual.compacted && accounting.clientCompacted !== true,
          },
        }
      : {}),
    ...(accounting.refetches && accounting.refetches.length > 0 ? { refetches: accounting.refetches.length } : {}),
  }
}

/** Why a request was not served: ctxgate's own refusal with its numbers, or what the status says. */
export function notServedBecause(source: LiveSource, report: RewriteReport | undefined, window?: number): string {
  if (source.outcome === 'rejected' && report)
    return `ctxgate refused: still ${report.estimatedAfter.toLocaleString('en-US')} tokens after edits, over the ${report.budget.toLocaleString('en-US')} left for the prompt${window === undefined ? '' : ` of a ${window.toLocaleString('en-US')} window`} (max_tokens takes the rest)`
  if (source.status === 0) return 'the client left before the answer'
  if (source.status === 400) return 'the upstream refused it (400)'
  if (source.status === 429) return 'rate limited by the upstream (429)'
  return `the upstream answered ${source.status}`
}

/**
 * Why ctxgate edited here and what this batch did (its own counts, not the session's running total):
 * the economy's reason when it made the batch, else the window or the budget the client's prompt was over.
 */
export function batchReason(report: RewriteReport, window: number | undefined, economyReason?: string): string {
  const folded = report.newFolded ?? report.folded
  const cleared = report.newCleared ?? report.cleared
  const kinds = [
    folded > 0 ? `folded ${folded}` : '',
    cleared > 0 ? `cleared ${cleared}` : '',
    report.droppedMessages > 0 ? `dropped ${report.droppedMessages} messages` : '',
    (report.restored ?? 0) > 0 ? `restored ${report.restored}` : '',
  ].filter(Boolean)
  const trigger =
    economyReason === 'pays_back'
      ? 'pays for its cache rewrite'
      : economyReason === 'cold_cache'
        ? 'cache had expired'
        : economyReason === 'restore'
          ? 'the agent uses a cleared result'
          : window !== undefined && report.estimatedBefore > window
            ? 'over the window'
            : report.estimatedBefore > report.budget
              ? 'over budget'
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
