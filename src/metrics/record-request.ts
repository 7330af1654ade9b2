import type { Usage } from '../model-call/usage.ts'
import { promptTokensOf } from '../model-call/usage.ts'
import type { Accounting } from '../model-call/prepared.ts'
import { cacheMissAgreement } from './cache-miss-agreement.ts'
import { dropLoopWatchFor } from './drop-loop.ts'
import { billedDollars, billedInputTokens, pricesFor, type ModelPrices } from '../rewrite/economy/prices.ts'
import type { SessionTotalsStore } from '../session/accounting.ts'
import { billedTurn } from '../session/billed-turn.ts'
import { sessionDigest } from '../live/live-event.ts'
import { recordUsage, statusClass, type ModelLabels, type ProxyMetrics } from './proxy-metrics.ts'

/** Everything one request leaves behind for metrics and session totals. */
export interface RequestRecord {
  readonly route: string
  readonly provider: string
  readonly status: number
  readonly outcome: string
  readonly upstreamStatus?: number
  readonly attempts: number
  readonly retries: readonly string[]
  readonly failOpen?: string
  readonly durationMs: number
  /** In ctxgate before the upstream call (parse, rewrite). */
  readonly requestOverheadMs?: number
  /** In ctxgate between the first upstream byte and the first client byte. */
  readonly responseOverheadMs?: number
  readonly ttfbMs?: number
  readonly usage?: Usage
  readonly accounting?: Accounting
}

export interface RecordDeps {
  readonly metrics: ProxyMetrics
  readonly models: ModelLabels
  readonly sessions: SessionTotalsStore
  /** The configured price table (`economy.prices`); without it, Anthropic's multipliers and no dollars. */
  readonly prices?: readonly ModelPrices[]
  /** Where the warning that a session keeps dropping whole rounds goes. */
  readonly logger?: { warn(object: object, message: string): void }
}

export function recordRequest(deps: RecordDeps, record: RequestRecord): void {
  const { metrics } = deps
  const { route, provider } = record
  const accounting = record.accounting
  const model = deps.models.of(accounting?.model)
  metrics.requests.inc({ route, provider, model, status_class: statusClass(record.status) })
  metrics.duration.observe({ route, provider }, record.durationMs / 1000)
  if (record.requestOverheadMs !== undefined)
    metrics.overhead.observe({ route, phase: 'request' }, record.requestOverheadMs / 1000)
  if (record.responseOverheadMs !== undefined)
    metrics.overhead.observe({ route, phase: 'response' }, record.responseOverheadMs / 1000)
  if (record.ttfbMs !== undefined) metrics.upstreamTtfb.observe({ route, provider }, record.ttfbMs / 1000)
  if (record.attempts > 0) metrics.upstreamAttempts.inc({ provider }, record.attempts)
  for (const reason of record.retries) metrics.upstreamRetries.inc({ provider, reason })
  if (record.failOpen) metrics.failOpen.inc({ provider, stage: record.failOpen })
  if (record.outcome === 'client_closed' || record.outcome === 'upstream_failed') {
    metrics.streamAborts.inc({
      provider,
      phase:
        record.outcome === 'client_closed'
          ? record.upstreamStatus
            ? 'client_mid_stream'
            : 'client_before_response'
          : 'upstream_mid_stream',
    })
  }
  const report = accounting?.report
  const prices = pricesFor(deps.prices ?? [], accounting?.model ?? '')
  if (record.usage) {
    recordUsage(metrics, provider, model, record.usage)
    recordBilled(metrics, { provider, model }, record.usage, prices)
    if (report && report.estimatedAfter > 0)
      metrics.estimatorRatio.observe(
        { provider, model },
        report.estimatedAfter / Math.max(1, promptTokensOf(record.usage)),
      )
  }
  if (report) {
    metrics.estimatedPromptTokens.inc({ provider, model, stage: 'before' }, report.estimatedBefore)
    if (record.outcome !== 'rejected')
      metrics.estimatedPromptTokens.inc({ provider, model, stage: 'after' }, report.estimatedAfter)
    for (const [edit, tokens] of Object.entries(report.tokensRemoved))
      if (tokens > 0) metrics.tokensRemoved.inc({ provider, model, edit }, tokens)
    if (report.folded > 0) metrics.edits.inc({ provider, edit: 'fold' }, report.folded)
    if (report.cleared > 0) metrics.edits.inc({ provider, edit: 'clear' }, report.cleared)
    if (report.droppedMessages > 0) metrics.edits.inc({ provider, edit: 'drop' }, report.droppedMessages)
  }
  if (record.outcome === 'rejected' && report) metrics.contextTooLong.inc({ provider })
  if (report?.newBatch && report.droppedMessages > 0 && accounting?.sessionId)
    warnOfDropLoop(deps, provider, accounting.sessionId)
  if (accounting?.prefixBreak) metrics.prefixBreaks.inc({ provider, cause: accounting.prefixBreak })
  const cacheMiss = cacheMissSummary(record.usage, accounting)
  if (cacheMiss) metrics.cacheMissDiagnosed.inc({ provider, reason: cacheMiss.reason, agrees: cacheMiss.agrees })
  if (accounting?.batchReason && record.outcome !== 'rejected')
    metrics.batches.inc({ provider, reason: accounting.batchReason })
  const avoided = accounting?.refusalAvoided === true && record.status === 200
  if (avoided) metrics.refusalsAvoided.inc({ provider, model })
  if (accounting?.sessionId)
    recordSession(deps.sessions, { ...accounting, sessionId: accounting.sessionId }, record.usage, { avoided, prices })
}

/** A session that keeps needing whole rounds dropped: a warning line and a metric, at growing intervals. */
function warnOfDropLoop(deps: RecordDeps, provider: string, sessionId: string): void {
  const count = dropLoopWatchFor(deps.metrics).note(sessionId)
  if (count === undefined) return
  deps.metrics.dropLoops.inc({ provider })
  deps.logger?.warn(
    { code: 'CTXGATE_DROP_LOOP', session: sessionDigest(sessionId), drops: count },
    `one session has needed whole old rounds dropped on ${count} requests: the agent may be looping`,
  )
}

/** The provider's reason for a cache miss and ctxgate's agreement with it: for the metric and the log line. */
export function cacheMissSummary(usage: Usage | undefined, accounting: Accounting | undefined) {
  const diagnosis = usage?.cacheDiagnosis
  if (!diagnosis) return undefined
  const own = { prefixBreak: accounting?.prefixBreak, newBatch: accounting?.report?.newBatch === true }
  return { ...diagnosis, agrees: cacheMissAgreement(diagnosis.reason, own) }
}

/** What the answer cost, in billed-equivalent tokens and (where the model's price is known) dollars. */
function recordBilled(
  metrics: ProxyMetrics,
  labels: { readonly provider: string; readonly model: string },
  usage: Usage,
  prices: ModelPrices,
): void {
  metrics.billedInputTokens.inc(labels, billedInputTokens(usage, prices))
  const dollars = billedDollars(usage, prices)
  if (dollars !== null) metrics.billedDollars.inc(labels, dollars)
}

/** Adds the request to its session's totals (fire and forget: a store failure is the store's to count). */
function recordSession(
  sessions: SessionTotalsStore,
  accounting: Accounting & { readonly sessionId: string },
  usage: Usage | undefined,
  turn: { readonly avoided: boolean; readonly prices: ModelPrices },
): void {
  const report = accounting.report
  const removed = report ? report.tokensRemoved.fold + report.tokensRemoved.clear + report.tokensRemoved.drop : 0
  void sessions.record(accounting.sessionId, {
    model: accounting.model,
    ...(usage ? { usage, billed: billedTurn(usage, report, turn.prices) } : {}),
    tokensRemoved: removed,
    prefixBreak: accounting.prefixBreak !== undefined,
    refusalAvoided: turn.avoided,
  })
}
