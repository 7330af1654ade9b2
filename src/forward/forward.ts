import { CtxgateError } from '../errors.ts'
import { cacheMissSummary, recordRequest, type RequestRecord } from '../metrics/record-request.ts'
import { Cancellation } from '../upstream/cancellation.ts'
import type { AttemptTiming, UpstreamCall } from '../upstream/send-with-retries.ts'
import { traceContextOf } from '../telemetry/telemetry.ts'
import { prepareRequest } from './prepare-request.ts'
import { relayAnswer } from './relay-answer.ts'
import { requestTargetProblem } from './request-target.ts'
import { ownResponseHeaders } from './response-headers.ts'
import { answerUpstreamFailure, sendWithRefit } from './send-upstream.ts'
import type { ForwardDeps, ForwardInput, ForwardResult, RequestNotes } from './forward-types.ts'
import { writeError } from './write-error.ts'

/** Forwards one client request to its upstream and relays the answer; nothing thrown escapes. */
export async function forward(deps: ForwardDeps, input: ForwardInput): Promise<void> {
  const started = performance.now()
  const response = input.reply.raw
  input.reply.hijack()
  const cancellation = new Cancellation()
  const abortIfClientLeft = (): void => {
    if (!response.writableFinished) cancellation.cancel()
  }
  response.once('close', abortIfClientLeft)
  const retries: string[] = []
  // Filled only when a span will show them.
  const attempts: AttemptTiming[] | undefined = deps.telemetry ? [] : undefined
  let result: ForwardResult
  try {
    result = await forwardOnce(deps, input, cancellation, { retries, attempts })
  } catch (error) {
    result = withNotes({}, answerInternalError(input, error))
  } finally {
    response.off('close', abortIfClientLeft)
  }
  reportRequest(deps, input, result, { retries, attempts, started })
}

/** What the request collects on its way, for its record. */
interface Trail {
  readonly retries: string[]
  readonly attempts: AttemptTiming[] | undefined
}

/** The request's steps, each returning what it found: check the target, prepare, send (with the refit), relay. */
async function forwardOnce(
  deps: ForwardDeps,
  input: ForwardInput,
  cancellation: Cancellation,
  { retries, attempts }: Trail,
): Promise<ForwardResult> {
  const started = performance.now()
  const response = input.reply.raw
  const shape = input.provider.errorShape
  const target = input.request.raw.url ?? '/'
  const problem = requestTargetProblem(target)
  if (problem) {
    const error = new CtxgateError('CTXGATE_INVALID_REQUEST', problem)
    return withNotes(
      {},
      { outcome: 'rejected', status: writeError(response, shape, error, { doNotRetry: false }), attempts: 0 },
    )
  }

  const ready = await prepareRequest(input)
  const enabled = deps.config.server.responseHeaders
  if (ready.kind === 'rejected') {
    const extraHeaders = ownResponseHeaders(enabled, input.request.headers, { ...ready.noted, refused: true })
    const status = writeError(response, shape, ready.error, { doNotRetry: true, extraHeaders })
    return withNotes(ready.noted, { outcome: 'rejected', status, attempts: 0 })
  }

  const upstream = deps.upstreams[input.provider.upstream]
  const call: UpstreamCall = {
    upstream,
    method: input.request.method,
    path: input.provider.upstreamPath(upstream.basePath, target),
    headers: ready.headers,
    body: ready.body,
    cancellation,
    policy: deps.config.retry,
    onRetry: (reason) => retries.push(reason),
    ...(attempts ? { onAttempt: (attempt: AttemptTiming) => attempts.push(attempt) } : {}),
  }
  const requestOverheadMs = performance.now() - started
  const sent = await sendWithRefit(call, ready.prepared, input.format)
  if (sent.kind !== 'replied')
    return withNotes(ready.noted, answerUpstreamFailure(input, sent, retries.length), requestOverheadMs)
  const ownHeaders = ownResponseHeaders(enabled, input.request.headers, {
    accounting: sent.prepared?.accounting,
    log: sent.prepared?.log,
    failOpen: ready.noted.failOpen,
    refitted: sent.refitted,
  })
  const relayed = await relayAnswer({ deps, input, sent, cancellation, ownHeaders })
  return withNotes(ready.noted, relayed, requestOverheadMs)
}

/**
 * A later step's result, with what the request side noted where the step said nothing. Every
 * result is built here with the same fields in the same order, so the code that reads it sees one
 * shape (no `{ ...step, extra }`: on Node 20 each such copy made a fresh hidden class, which cost GC).
 */
function withNotes(
  noted: RequestNotes,
  step: ForwardResult,
  requestOverheadMs: number | undefined = step.requestOverheadMs,
): ForwardResult {
  return {
    status: step.status,
    outcome: step.outcome,
    attempts: step.attempts,
    upstreamStatus: step.upstreamStatus,
    upstreamRequestId: step.upstreamRequestId,
    bytesOut: step.bytesOut,
    log: step.log ?? noted.log,
    accounting: step.accounting ?? noted.accounting,
    usage: step.usage,
    promptTokens: step.promptTokens,
    outputTokens: step.outputTokens,
    failOpen: noted.failOpen,
    error: step.error ?? noted.error,
    requestOverheadMs,
    responseOverheadMs: step.responseOverheadMs,
    ttfbMs: step.ttfbMs,
    streamed: step.streamed,
    refitted: step.refitted,
    response: step.response,
  }
}

function answerInternalError(input: ForwardInput, error: unknown): ForwardResult {
  const response = input.reply.raw
  const message = error instanceof Error ? error.message : String(error)
  let status = 0
  if (!response.headersSent && !response.destroyed) {
    const internal = new CtxgateError('CTXGATE_INTERNAL', 'ctxgate failed while handling this request')
    status = writeError(response, input.provider.errorShape, internal, { doNotRetry: false })
  } else response.destroy()
  return { outcome: 'internal_error', status, attempts: 0, error: message }
}

/** Metrics, session totals and the request's one log line. */
function reportRequest(
  deps: ForwardDeps,
  input: ForwardInput,
  result: ForwardResult,
  trail: Trail & { readonly started: number },
): void {
  const route = input.format?.name ?? 'passthrough'
  const provider = input.provider.upstream
  const { retries } = trail
  const durationMs = performance.now() - trail.started
  try {
    const record = requestRecord(result, { route, provider, durationMs, retries }, trail, input)
    const virtual = recordRequest(deps, record)
    deps.live?.recordRequest(virtual ? { ...record, virtual } : record, input.request.headers['user-agent'])
  } catch (error) {
    deps.logger.warn({ error: (error as Error).message }, 'recording metrics failed')
  }
  // The line's object is built only when someone reads it.
  if (!deps.logger.isLevelEnabled('info')) return
  const { request } = input
  deps.logger.info(
    {
      reqId: request.id,
      method: request.method,
      path: pathOnly(request.url),
      route,
      upstream: provider,
      status: result.status,
      upstreamStatus: result.upstreamStatus,
      attempts: result.attempts,
      retries: retries.length > 0 ? retries : undefined,
      durationMs: Math.round(durationMs * 100) / 100,
      bytesIn: Buffer.isBuffer(input.body) ? input.body.length : undefined,
      bytesOut: result.bytesOut ?? 0,
      outcome: result.outcome,
      failOpen: result.failOpen,
      upstreamRequestId: result.upstreamRequestId,
      promptTokens: result.promptTokens,
      outputTokens: result.outputTokens,
      tokens: result.usage,
      prefixBreak: result.accounting?.prefixBreak,
      cacheMiss: cacheMissSummary(result.usage, result.accounting),
      ...result.log,
      error: result.error,
    },
    'request',
  )
}

/** What metrics, session totals and the live page read, field by field in one fixed shape. */
function requestRecord(
  result: ForwardResult,
  {
    route,
    provider,
    durationMs,
    retries,
  }: { route: string; provider: string; durationMs: number; retries: readonly string[] },
  trail: Trail & { readonly started: number },
  input: ForwardInput,
): RequestRecord {
  return {
    route,
    provider,
    status: result.status,
    outcome: result.outcome,
    upstreamStatus: result.upstreamStatus,
    attempts: result.attempts,
    retries,
    failOpen: result.failOpen,
    durationMs,
    requestOverheadMs: result.requestOverheadMs,
    responseOverheadMs: result.responseOverheadMs,
    ttfbMs: result.ttfbMs,
    usage: result.usage,
    accounting: result.accounting,
    startedAt: trail.started,
    traceContext: trail.attempts ? traceContextOf(input.request.headers) : undefined,
    upstreamAttempts: trail.attempts,
    streamed: result.streamed,
    refitted: result.refitted,
    response: result.response,
  }
}

function pathOnly(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
