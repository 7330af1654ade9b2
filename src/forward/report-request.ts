import type { Logger } from 'pino'
import type { LiveRecorder } from '../live/live-recorder.ts'
import { recordRequest, type RecordDeps } from '../metrics/record-request.ts'
import { cacheMissSummary } from '../request/cache-miss-agreement.ts'
import type { RequestRecord } from '../request/request-record.ts'
import { promptTokensOf } from '../model-call/usage.ts'

export interface ReportDeps extends RecordDeps {
  readonly logger: Logger
  /** The live page (/ctxgate/): told about every finished request. */
  readonly live?: LiveRecorder | undefined
}

/** The longest model name a log line carries. */
const modelLogChars = 128

/** Where a request was addressed, for the first fields of its log line. */
export interface RequestAddress {
  readonly reqId: string
  readonly method: string
  readonly path: string
  readonly userAgent: string | undefined
}

/** A finished request, reported from its one record: metrics and session totals, the live page, the log line. */
export function reportRequest(deps: ReportDeps, record: RequestRecord, address: RequestAddress): void {
  try {
    const virtual = recordRequest(deps, record)
    deps.live?.recordRequest(virtual ? { ...record, virtual } : record, address.userAgent)
  } catch (error) {
    deps.logger.warn({ error: (error as Error).message }, 'recording metrics failed')
  }
  // The line's object is built only when someone reads it.
  if (!deps.logger.isLevelEnabled('info')) return
  deps.logger.info(requestLine(record, address), 'request')
}

/** The request's one log line, the same fields for HTTP and a socket's response. */
function requestLine(record: RequestRecord, address: RequestAddress): Record<string, unknown> {
  const { usage } = record
  return {
    reqId: address.reqId,
    method: address.method,
    path: address.path,
    route: record.route,
    upstream: record.provider,
    // The client's model name, cut short: it is the client's to choose (metrics bound it their own way).
    model: record.accounting?.model.slice(0, modelLogChars),
    status: record.status,
    upstreamStatus: record.upstreamStatus,
    attempts: record.attempts,
    retries: record.retries.length > 0 ? record.retries : undefined,
    durationMs: Math.round(record.durationMs * 100) / 100,
    bytesIn: record.bytesIn,
    bytesOut: record.bytesOut ?? 0,
    outcome: record.outcome,
    sentAs: record.sentAs,
    failOpen: record.failOpen,
    upstreamRequestId: record.upstreamRequestId,
    promptTokens: usage ? promptTokensOf(usage) : undefined,
    outputTokens: usage?.outputTokens,
    tokens: usage,
    prefixBreak: record.accounting?.prefixBreak,
    cacheMiss: cacheMissSummary(usage, record.accounting),
    ...record.log,
    error: record.error,
  }
}
