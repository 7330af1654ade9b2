import type { RequestRecord } from '../request/request-record.ts'
import type { Accounting } from '../request/prepared.ts'
import type { Usage } from '../model-call/usage.ts'
import type { RewriteReport } from '../rewrite/types.ts'
import type { AttemptTiming } from '../upstream/send-with-retries.ts'

/** The fields of a request's record that its span and GenAI metrics read (a RequestRecord is one). */
export interface CallFacts {
  readonly route: string
  readonly provider: string
  readonly status: number
  readonly outcome: string
  readonly upstreamStatus?: number | undefined
  readonly attempts: number
  readonly retries: readonly string[]
  readonly failOpen?: string | undefined
  readonly durationMs: number
  readonly ttfbMs?: number | undefined
  readonly usage?: Usage | undefined
  readonly accounting?: AccountingFacts | undefined
  readonly streamed?: boolean | undefined
  readonly refitted?: boolean | undefined
  readonly response?: RequestRecord['response']
}

export type AccountingFacts = Pick<
  Accounting,
  'model' | 'sessionId' | 'batchReason' | 'breakpointsPlaced' | 'refusalAvoided' | 'prefixBreak' | 'kind' | 'arm'
> & { readonly report?: ReportFacts | undefined }

export type ReportFacts = Pick<
  RewriteReport,
  'estimatedBefore' | 'estimatedAfter' | 'budget' | 'tokensRemoved' | 'newBatch' | 'firstNewEdit' | 'firstEditedMessage'
>

/**
 * One finished model call as the export worker gets it: plain data (structured-clone cheap, no
 * message content, no headers but the trace context), with times as epoch milliseconds because
 * performance.now() has another origin in the worker.
 */
export interface ExportedCall extends CallFacts {
  /** The bounded model label Prometheus uses, for the metrics' `gen_ai.request.model`. */
  readonly modelLabel: string
  readonly startMs: number
  readonly endMs: number
  readonly upstreamAttempts: readonly AttemptTiming[]
  readonly traceparent?: string | undefined
  readonly tracestate?: string | undefined
}

/** performance.now()'s origin as epoch milliseconds: fixed for the thread's life, so read once. */
const origin = performance.timeOrigin

/** The export's copy of a record; runs on the request's thread, so it copies and computes as little as it can. */
export function exportedCallOf(record: RequestRecord, modelLabel: string): ExportedCall {
  const startedAt = record.startedAt ?? performance.now() - record.durationMs
  const accounting = record.accounting
  const report = accounting?.report
  const trace = record.traceContext
  return {
    route: record.route,
    provider: record.provider,
    status: record.status,
    outcome: record.outcome,
    upstreamStatus: record.upstreamStatus,
    attempts: record.attempts,
    retries: record.retries,
    failOpen: record.failOpen,
    durationMs: record.durationMs,
    ttfbMs: record.ttfbMs,
    usage: record.usage,
    accounting: accounting && {
      model: accounting.model,
      sessionId: accounting.sessionId,
      batchReason: accounting.batchReason,
      breakpointsPlaced: accounting.breakpointsPlaced,
      refusalAvoided: accounting.refusalAvoided,
      prefixBreak: accounting.prefixBreak,
      kind: accounting.kind,
      arm: accounting.arm,
      report: report && {
        estimatedBefore: report.estimatedBefore,
        estimatedAfter: report.estimatedAfter,
        budget: report.budget,
        tokensRemoved: report.tokensRemoved,
        newBatch: report.newBatch,
        firstNewEdit: report.firstNewEdit,
        firstEditedMessage: report.firstEditedMessage,
      },
    },
    streamed: record.streamed,
    refitted: record.refitted,
    response: record.response,
    modelLabel,
    startMs: origin + startedAt,
    endMs: origin + startedAt + record.durationMs,
    upstreamAttempts: (record.upstreamAttempts ?? []).map((attempt) => ({
      ...attempt,
      startedAt: origin + attempt.startedAt,
      endedAt: origin + attempt.endedAt,
    })),
    // As W3CTraceContextPropagator reads repeated headers: the first traceparent, every tracestate.
    traceparent: Array.isArray(trace?.traceparent) ? trace.traceparent[0] : trace?.traceparent,
    tracestate: Array.isArray(trace?.tracestate) ? trace.tracestate.join(',') : trace?.tracestate,
  }
}
