import type { Usage } from '../model-call/usage.ts'
import { promptTokensOf } from '../model-call/usage.ts'
import type { Accounting } from '../request/prepared.ts'
import type { DeadWrite, DeadWriteTracker } from '../model-call/dead-writes.ts'
import type { Refetch } from '../rewrite/refetch.ts'
import { cacheMissSummary } from '../request/cache-miss-agreement.ts'
import { dropLoopWatchFor } from './drop-loop.ts'
import { billedDollars, billedInputTokens, pricesFor, type ModelPrices } from '../billing/prices.ts'
import type { SessionTotalsStore } from '../session/accounting.ts'
import { billedTurn, tokensRemovedOf } from '../session/billed-turn.ts'
import type { VirtualBill, VirtualClients } from '../session/client-counterfactual.ts'
import { ledgerTurn, recordLedger, type LedgerTurn } from './record-ledger.ts'
import { sessionDigest } from '../live/live-event.ts'
import type { ModelLabels } from './model-labels.ts'
import { statusClass, type ProxyMetrics } from './proxy-metrics.ts'
import { recordUsage } from './record-usage.ts'
import type { ModelCallTelemetry } from '../telemetry/telemetry.ts'
import type { RequestRecord } from '../request/request-record.ts'

export interface RecordDeps {
  readonly metrics: ProxyMetrics
  readonly models: ModelLabels
  readonly sessions: SessionTotalsStore
  /** The configured price table (`economy.prices`); without it, Anthropic's multipliers and no dollars. */
  readonly prices?: readonly ModelPrices[]
  /** OpenTelemetry export (span and GenAI metrics), when configured. */
  readonly telemetry?: ModelCallTelemetry | undefined
  /** Each session's client as it would have run without ctxgate (known clients only). */
  readonly virtualClients?: VirtualClients
  /** Follows each session's cache writes to count the ones never read (dead writes). */
  readonly deadWrites?: DeadWriteTracker
  readonly now?: () => number
  /** Where the warning that a session keeps dropping whole rounds goes. */
  readonly logger?: { warn(object: object, message: string): void }
}

/** Counts the request; returns what the client would have been billed without ctxgate, when its rule is known. */
export function recordRequest(deps: RecordDeps, record: RequestRecord): VirtualBill | undefined {
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
    if ((report.clearedInputs ?? 0) > 0) metrics.edits.inc({ provider, edit: 'input' }, report.clearedInputs)
  }
  if (record.outcome === 'rejected' && report) metrics.contextTooLong.inc({ provider })
  if (report?.newBatch && report.droppedMessages > 0 && accounting?.sessionId)
    warnOfDropLoop(deps, provider, accounting.sessionId)
  if (accounting?.prefixBreak) metrics.prefixBreaks.inc({ provider, cause: accounting.prefixBreak })
  const cacheMiss = cacheMissSummary(record.usage, accounting)
  if (cacheMiss) metrics.cacheMissDiagnosed.inc({ provider, reason: cacheMiss.reason, agrees: cacheMiss.agrees })
  return recordOutcome(deps, record, { provider, model, prices })
}

/** Batches, re-fetches, the regret ledger, refusals avoided, telemetry, dead writes and the session's totals of one answer. */
function recordOutcome(
  deps: RecordDeps,
  record: RequestRecord,
  labels: { readonly provider: string; readonly model: string; readonly prices: ModelPrices },
): VirtualBill | undefined {
  const { metrics } = deps
  const { provider, model, prices } = labels
  const accounting = record.accounting
  const served = record.outcome !== 'rejected'
  if (accounting?.batchReason && served) metrics.batches.inc({ provider, reason: accounting.batchReason })
  recordRefetches(metrics, provider, accounting?.refetches ?? [])
  const ledger = served
    ? recordLedger(metrics, provider, accounting, ledgerTurn(accounting, record.usage, prices))
    : undefined
  const avoided = accounting?.refusalAvoided === true && record.status === 200
  if (avoided) metrics.refusalsAvoided.inc({ provider, model })
  deps.telemetry?.recordModelCall(record, model)
  if (deps.deadWrites) countDeadWrites(deps.deadWrites, metrics, provider, record, (deps.now ?? Date.now)())
  if (!accounting?.sessionId) return undefined
  return recordSession(deps, record, { ...accounting, sessionId: accounting.sessionId }, { avoided, prices, ledger })
}

/** The request as the client's own rule would have sent it unedited (served, measured, rewritten requests only). */
function virtualBill(
  clients: VirtualClients | undefined,
  record: RequestRecord,
  accounting: Accounting & { readonly sessionId: string },
  prices: ModelPrices,
): VirtualBill | undefined {
  const { usage } = record
  const report = accounting.report
  const client = accounting.client
  if (!clients || !client || !usage || !report || record.status !== 200) return undefined
  return clients.bill(
    accounting.sessionId,
    {
      rule: client.rule,
      usage,
      sentTokens: promptTokensOf(usage),
      estimatedBefore: report.estimatedBefore,
      estimatedAfter: report.estimatedAfter,
      window: client.window,
      maxOutputTokens: client.maxOutputTokens,
      newBatch: report.newBatch,
    },
    prices,
  )
}

/** Feeds the answer's cache counts to the session's write tracker; counts whatever that showed to be dead. */
function countDeadWrites(
  tracker: DeadWriteTracker,
  metrics: ProxyMetrics,
  provider: string,
  record: RequestRecord,
  now: number,
): void {
  const { usage, accounting } = record
  const dead: DeadWrite[] = tracker.sweep(now)
  if (usage && accounting?.sessionId && record.status === 200)
    dead.push(
      ...tracker.observe(`${provider}\n${accounting.sessionId}`, {
        at: now,
        read: usage.cacheReadTokens,
        written5m: usage.cacheWrite5mTokens,
        written1h: usage.cacheWrite1hTokens,
        ...(accounting.clientCompaction ? { clientCompaction: true } : {}),
        ...(accounting.report?.newBatch ? { ctxgateBatch: true } : {}),
        ...(accounting.prefixBreak ? { prefixBreak: accounting.prefixBreak } : {}),
      }),
    )
  for (const write of dead) metrics.deadCacheWrites.inc({ provider, cause: write.cause }, write.tokens)
}

function recordRefetches(metrics: ProxyMetrics, provider: string, refetches: readonly Refetch[]): void {
  for (const refetch of refetches) {
    const tool = toolLabel(refetch.tool)
    metrics.refetches.inc({ provider, tool })
    metrics.refetchTokens.inc({ provider, tool }, refetch.tokens)
  }
}

/** Tool names come from clients: a plain name among the first few seen is its own label, any other is `other`. */
const toolLabels = new Set<string>()
const maxToolLabels = 32

function toolLabel(name: string): string {
  if (toolLabels.has(name)) return name
  if (!/^[A-Za-z0-9_.-]{1,40}$/.test(name) || toolLabels.size >= maxToolLabels) return 'other'
  toolLabels.add(name)
  return name
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
  deps: RecordDeps,
  record: RequestRecord,
  accounting: Accounting & { readonly sessionId: string },
  turn: { readonly avoided: boolean; readonly prices: ModelPrices; readonly ledger: LedgerTurn | undefined },
): VirtualBill | undefined {
  const virtual = virtualBill(deps.virtualClients, record, accounting, turn.prices)
  const { usage, status } = record
  const report = accounting.report
  void deps.sessions.record(accounting.sessionId, {
    model: accounting.model,
    ...(usage ? { usage, billed: billedTurn(usage, report, turn.prices, virtual) } : {}),
    tokensRemoved: tokensRemovedOf(report),
    prefixBreak: accounting.prefixBreak !== undefined,
    refusalAvoided: turn.avoided,
    ...(accounting.arm === undefined ? {} : { arm: accounting.arm }),
    ...(accounting.kind === undefined ? {} : { kind: accounting.kind }),
    lengthRefusal: record.outcome === 'rejected' && report !== undefined,
    clientCompacted: accounting.clientCompacted === true,
    clientError: status >= 400 && status < 500,
    answered: status === 200,
    refetches: accounting.refetches?.length ?? 0,
    refetchTokens: (accounting.refetches ?? []).reduce((sum, refetch) => sum + refetch.tokens, 0),
    ...(turn.ledger ? { ledger: turn.ledger } : {}),
  })
  return virtual
}
