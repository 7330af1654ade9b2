import { SpanKind, trace, type Attributes, type SpanContext } from '@opentelemetry/api'
import type { RequestRecord } from '../request/request-record.ts'
import type { AttemptTiming } from '../upstream/send-with-retries.ts'
import { socketRoute } from '../providers/registry.ts'
import type { FinishedSpans, FinishedSpan } from './finished-spans.ts'
import { errorTypeOf, operationName, type ServerAddress } from './genai-attributes.ts'
import { parentContextOf } from './trace-parent.ts'

/** performance.now() readings as the epoch milliseconds OpenTelemetry takes. */
function epochMs(at: number): number {
  return performance.timeOrigin + at
}

/**
 * One finished model call as a CLIENT span named `{gen_ai.operation.name} {gen_ai.request.model}`
 * (GenAI semantic conventions), made after the fact from the request's record so nothing runs while
 * the request does. Children: one span per upstream attempt. Events: the first upstream byte, a refusal.
 */
export function recordModelCallSpan(
  spans: FinishedSpans,
  record: RequestRecord,
  attributes: Attributes,
  server: ServerAddress | undefined,
): void {
  const startedAt = record.startedAt ?? performance.now() - record.durationMs
  const model = record.accounting?.model
  const name = model ? `${operationName} ${model}` : operationName
  const parent = parentContextOf(record.traceContext)
  const context = spans.begin(parent, name, SpanKind.CLIENT, attributes)
  // Sampled out: nothing more to build.
  if (!context) return
  const attempts = record.upstreamAttempts ?? []
  attempts.forEach((attempt, index) => recordAttempt(spans, context, { record, attempt, index, server }))
  const endMs = epochMs(startedAt + record.durationMs)
  const events: NonNullable<FinishedSpan['events']>[number][] = []
  const answered = attempts.findLast((attempt) => attempt.status !== undefined && attempt.retry === undefined)
  if (answered && record.upstreamStatus !== undefined)
    events.push({
      name: 'ctxgate.upstream.first_byte',
      atMs: epochMs(answered.endedAt),
      attributes: { 'http.response.status_code': answered.status ?? 0 },
    })
  const refusal = refusalEvent(record, attempts, endMs)
  if (refusal) events.push(refusal)
  spans.end({
    name,
    kind: SpanKind.CLIENT,
    context,
    parent: trace.getSpanContext(parent),
    startMs: epochMs(startedAt),
    endMs,
    attributes,
    events,
    error: errorTypeOf(record),
  })
}

interface AttemptInput {
  readonly record: RequestRecord
  readonly attempt: AttemptTiming
  readonly index: number
  readonly server: ServerAddress | undefined
}

/** An upstream attempt as an HTTP client span (HTTP semantic conventions): a retry shows its resend count and reason. */
function recordAttempt(
  spans: FinishedSpans,
  parent: SpanContext,
  { record, attempt, index, server }: AttemptInput,
): void {
  const overSocket = record.route === socketRoute
  const attributes: Attributes = overSocket
    ? { 'ctxgate.upstream.transport': 'websocket' }
    : { 'http.request.method': 'POST' }
  if (index > 0) attributes['http.request.resend_count'] = index
  if (attempt.status !== undefined) attributes['http.response.status_code'] = attempt.status
  if (attempt.retry) attributes['ctxgate.upstream.retry_reason'] = attempt.retry
  const errorType =
    attempt.failure ?? (attempt.status !== undefined && attempt.status >= 400 ? String(attempt.status) : undefined)
  if (errorType) attributes['error.type'] = errorType
  if (server) {
    attributes['server.address'] = server.address
    attributes['server.port'] = server.port
  }
  spans.end({
    name: overSocket ? 'response.create' : 'POST',
    kind: SpanKind.CLIENT,
    context: spans.child(parent),
    parent,
    startMs: epochMs(attempt.startedAt),
    endMs: epochMs(attempt.endedAt),
    attributes,
    error: errorType,
  })
}

/**
 * A refusal: the upstream refused the first request for its length (ctxgate then sent a smaller
 * one), or ctxgate answered "too long" itself without calling the upstream.
 */
function refusalEvent(record: RequestRecord, attempts: readonly AttemptTiming[], endMs: number) {
  if (record.refitted) {
    const refused = attempts.find((attempt) => attempt.status !== undefined && attempt.retry === undefined)
    return {
      name: 'ctxgate.refusal',
      atMs: refused ? epochMs(refused.endedAt) : endMs,
      attributes: {
        'ctxgate.refusal.source': 'upstream',
        'ctxgate.refusal.reason': 'context_length',
        'ctxgate.refusal.action': 'refit',
      },
    }
  }
  if (record.outcome === 'rejected' && record.accounting?.report)
    return {
      name: 'ctxgate.refusal',
      atMs: endMs,
      attributes: {
        'ctxgate.refusal.source': 'ctxgate',
        'ctxgate.refusal.reason': 'context_length',
        'ctxgate.refusal.action': 'rejected',
      },
    }
  return undefined
}
