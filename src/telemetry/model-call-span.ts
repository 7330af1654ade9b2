import { SpanKind, trace, type Attributes, type SpanContext } from '@opentelemetry/api'
import type { AttemptTiming } from '../upstream/send-with-retries.ts'
import { socketRoute } from '../providers/registry.ts'
import type { ExportedCall } from './exported-call.ts'
import type { FinishedSpans, FinishedSpan } from './finished-spans.ts'
import { errorTypeOf, operationName, type ServerAddress } from './genai-attributes.ts'
import { parentContextOf } from './trace-parent.ts'

/**
 * One finished model call as a CLIENT span named `{gen_ai.operation.name} {gen_ai.request.model}`
 * (GenAI semantic conventions), made after the fact from the request's record so nothing runs while
 * the request does. Children: one span per upstream attempt when there were several (retries, a
 * refit). Events: the first upstream byte, a refusal.
 * Times in `record` are epoch milliseconds.
 */
export function recordModelCallSpan(
  spans: FinishedSpans,
  record: ExportedCall,
  attributes: Attributes,
  server: ServerAddress | undefined,
): void {
  const model = record.accounting?.model
  const name = model ? `${operationName} ${model}` : operationName
  const parent = parentContextOf(
    record.traceparent === undefined ? undefined : { traceparent: record.traceparent, tracestate: record.tracestate },
  )
  const context = spans.begin(parent, name, SpanKind.CLIENT, attributes)
  // Sampled out: nothing more to build.
  if (!context) return
  const attempts = record.upstreamAttempts
  // One attempt is the call itself (its status and first byte are on this span): children only when there were retries or a refit.
  if (attempts.length > 1)
    attempts.forEach((attempt, index) => recordAttempt(spans, context, { record, attempt, index, server }))
  const endMs = record.endMs
  const events: NonNullable<FinishedSpan['events']>[number][] = []
  const answered = attempts.findLast((attempt) => attempt.status !== undefined && attempt.retry === undefined)
  if (answered && record.upstreamStatus !== undefined)
    events.push({
      name: 'ctxgate.upstream.first_byte',
      atMs: answered.endedAt,
      attributes: { 'http.response.status_code': answered.status ?? 0 },
    })
  const refusal = refusalEvent(record, attempts, endMs)
  if (refusal) events.push(refusal)
  spans.end({
    name,
    kind: SpanKind.CLIENT,
    context,
    parent: trace.getSpanContext(parent),
    startMs: record.startMs,
    endMs,
    attributes,
    events,
    error: errorTypeOf(record),
  })
}

interface AttemptInput {
  readonly record: ExportedCall
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
    startMs: attempt.startedAt,
    endMs: attempt.endedAt,
    attributes,
    error: errorType,
  })
}

/**
 * A refusal: the upstream refused the first request for its length (ctxgate then sent a smaller
 * one), or ctxgate answered "too long" itself without calling the upstream.
 */
function refusalEvent(record: ExportedCall, attempts: readonly AttemptTiming[], endMs: number) {
  if (record.refitted) {
    const refused = attempts.find((attempt) => attempt.status !== undefined && attempt.retry === undefined)
    return {
      name: 'ctxgate.refusal',
      atMs: refused ? refused.endedAt : endMs,
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
