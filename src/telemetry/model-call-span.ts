import { SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api'
import type { RequestRecord } from '../metrics/record-request.ts'
import type { AttemptTiming } from '../upstream/send-with-retries.ts'
import { socketRoute } from '../websocket/turn.ts'
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
  tracer: Tracer,
  record: RequestRecord,
  attributes: Attributes,
  server: ServerAddress | undefined,
): void {
  const startedAt = record.startedAt ?? performance.now() - record.durationMs
  const model = record.accounting?.model
  const span = tracer.startSpan(
    model ? `${operationName} ${model}` : operationName,
    { kind: SpanKind.CLIENT, startTime: epochMs(startedAt), attributes },
    parentContextOf(record.traceContext),
  )
  // Sampled out: nothing more to build.
  if (!span.isRecording()) return
  const attempts = record.upstreamAttempts ?? []
  attempts.forEach((attempt, index) => recordAttempt(tracer, span, { record, attempt, index, server }))
  const answered = attempts.findLast((attempt) => attempt.status !== undefined && attempt.retry === undefined)
  if (answered && record.upstreamStatus !== undefined)
    span.addEvent(
      'ctxgate.upstream.first_byte',
      { 'http.response.status_code': answered.status },
      epochMs(answered.endedAt),
    )
  addRefusalEvent(span, record, attempts, epochMs(startedAt + record.durationMs))
  const errorType = errorTypeOf(record)
  if (errorType) span.setStatus({ code: SpanStatusCode.ERROR, message: errorType })
  span.end(epochMs(startedAt + record.durationMs))
}

interface AttemptInput {
  readonly record: RequestRecord
  readonly attempt: AttemptTiming
  readonly index: number
  readonly server: ServerAddress | undefined
}

/** An upstream attempt as an HTTP client span (HTTP semantic conventions): a retry shows its resend count and reason. */
function recordAttempt(tracer: Tracer, parent: Span, { record, attempt, index, server }: AttemptInput): void {
  const overSocket = record.route === socketRoute
  const attributes: Attributes = overSocket
    ? { 'ctxgate.upstream.transport': 'websocket' }
    : { 'http.request.method': 'POST' }
  if (index > 0) attributes['http.request.resend_count'] = index
  if (attempt.status !== undefined) attributes['http.response.status_code'] = attempt.status
  if (attempt.retry) attributes['ctxgate.upstream.retry_reason'] = attempt.retry
  if (attempt.failure) attributes['error.type'] = attempt.failure
  else if (attempt.status !== undefined && attempt.status >= 400) attributes['error.type'] = String(attempt.status)
  if (server) {
    attributes['server.address'] = server.address
    attributes['server.port'] = server.port
  }
  const child = tracer.startSpan(
    overSocket ? 'response.create' : 'POST',
    { kind: SpanKind.CLIENT, startTime: epochMs(attempt.startedAt), attributes },
    trace.setSpan(parentContextOf(undefined), parent),
  )
  if (attributes['error.type'] !== undefined) child.setStatus({ code: SpanStatusCode.ERROR })
  child.end(epochMs(attempt.endedAt))
}

/**
 * A refusal: the upstream refused the first request for its length (ctxgate then sent a smaller
 * one), or ctxgate answered "too long" itself without calling the upstream.
 */
function addRefusalEvent(span: Span, record: RequestRecord, attempts: readonly AttemptTiming[], endedAt: number): void {
  if (record.refitted) {
    const refused = attempts.find((attempt) => attempt.status !== undefined && attempt.retry === undefined)
    span.addEvent(
      'ctxgate.refusal',
      {
        'ctxgate.refusal.source': 'upstream',
        'ctxgate.refusal.reason': 'context_length',
        'ctxgate.refusal.action': 'refit',
      },
      refused ? epochMs(refused.endedAt) : endedAt,
    )
  } else if (record.outcome === 'rejected' && record.accounting?.report) {
    span.addEvent(
      'ctxgate.refusal',
      {
        'ctxgate.refusal.source': 'ctxgate',
        'ctxgate.refusal.reason': 'context_length',
        'ctxgate.refusal.action': 'rejected',
      },
      endedAt,
    )
  }
}
