import { CtxgateError } from '../errors.ts'
import type { RequestRecord } from '../request/request-record.ts'
import { Cancellation } from '../upstream/cancellation.ts'
import type { AttemptTiming, UpstreamCall } from '../upstream/send-with-retries.ts'
import { traceContextOf } from '../telemetry/telemetry.ts'
import { prepareRequest } from './prepare-request.ts'
import { recordsAfterDispatch } from './records-after-dispatch.ts'
import { asSent, readWhileSending } from './read-after-sending.ts'
import { relayAnswer } from './relay-answer.ts'
import { reportRequest } from './report-request.ts'
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
  let finished: Finished
  try {
    finished = await forwardOnce(deps, input, cancellation, { retries, attempts })
  } catch (error) {
    finished = { noted: {}, step: answerInternalError(input, error) }
  } finally {
    response.off('close', abortIfClientLeft)
  }
  const { request } = input
  reportRequest(deps, requestRecord(finished, { retries, attempts, started }, input), {
    reqId: request.id,
    method: request.method,
    path: pathOnly(request.url),
    userAgent: request.headers['user-agent'],
  })
}

/** What the request collects on its way, for its record. */
interface Trail {
  readonly retries: string[]
  readonly attempts: AttemptTiming[] | undefined
}

/** How the request ended: what the request side noted, and what the last step that ran found. */
interface Finished {
  readonly noted: RequestNotes
  readonly step: ForwardResult
  /** In ctxgate before the upstream call (parse, rewrite), once it was made. */
  readonly requestOverheadMs?: number
}

/** The request's steps, each returning what it found: check the target, prepare, send (with the refit), relay. */
async function forwardOnce(
  deps: ForwardDeps,
  input: ForwardInput,
  cancellation: Cancellation,
  { retries, attempts }: Trail,
): Promise<Finished> {
  const started = performance.now()
  const response = input.reply.raw
  const shape = input.provider.errorShape
  const target = input.request.raw.url ?? '/'
  const problem = requestTargetProblem(target)
  if (problem) {
    const error = new CtxgateError('CTXGATE_INVALID_REQUEST', problem)
    const status = writeError(response, shape, error, { doNotRetry: false })
    return { noted: {}, step: { outcome: 'rejected', status, attempts: 0 } }
  }

  // A request the hook can only read (rewriting off, or passthrough asked) is sent first and read while the upstream works.
  const body = input.body
  const sendFirst =
    Buffer.isBuffer(body) &&
    input.prepare !== undefined &&
    deps.readAfterSending?.(body.length, input.request.headers) === true
  const ready = sendFirst ? asSent({ ...input, body }) : await prepareRequest(input)
  const enabled = deps.config.server.responseHeaders
  if (ready.kind === 'rejected') {
    const extraHeaders = ownResponseHeaders(enabled, input.request.headers, { ...ready.noted, refused: true })
    const status = writeError(response, shape, ready.error, { doNotRetry: true, extraHeaders })
    return { noted: ready.noted, step: { outcome: 'rejected', status, attempts: 0 } }
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
    overloadStatus: input.provider.overloadStatus,
    onRetry: (reason) => retries.push(reason),
    ...(attempts ? { onAttempt: (attempt: AttemptTiming) => attempts.push(attempt) } : {}),
  }
  const requestOverheadMs = performance.now() - started
  const sending = sendWithRefit(call, ready.prepared, input.format)
  // Sent first: read while the upstream works; otherwise a request sent as written makes its records now.
  const { sent, noted } = sendFirst
    ? await readWhileSending(input, sending)
    : await recordsAfterDispatch(ready, sending)
  if (sent.kind !== 'replied')
    return { noted, step: answerUpstreamFailure(input, sent, retries.length), requestOverheadMs }
  const ownHeaders = ownResponseHeaders(enabled, input.request.headers, {
    accounting: sent.prepared?.accounting,
    log: sent.prepared?.log,
    failOpen: noted.failOpen,
    refitted: sent.refitted,
  })
  const relayed = await relayAnswer({ deps, input, sent, cancellation, ownHeaders })
  return { noted, step: relayed, requestOverheadMs }
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

/**
 * The request's one record, built here once: the last step's facts, with what the request side
 * noted where the step said nothing. Every field is written out in one fixed order, so the code that
 * reads it sees one shape (no `{ ...step, extra }`: on Node 20 each such copy made a fresh hidden class, which cost GC).
 */
function requestRecord(
  { noted, step, requestOverheadMs }: Finished,
  trail: Trail & { readonly started: number },
  input: ForwardInput,
): RequestRecord {
  return {
    route: input.format?.name ?? 'passthrough',
    provider: input.provider.upstream,
    status: step.status,
    outcome: step.outcome,
    upstreamStatus: step.upstreamStatus,
    attempts: step.attempts,
    retries: trail.retries,
    failOpen: noted.failOpen,
    durationMs: performance.now() - trail.started,
    requestOverheadMs,
    responseOverheadMs: step.responseOverheadMs,
    ttfbMs: step.ttfbMs,
    usage: step.usage,
    accounting: step.accounting ?? noted.accounting,
    startedAt: trail.started,
    traceContext: trail.attempts ? traceContextOf(input.request.headers) : undefined,
    upstreamAttempts: trail.attempts,
    streamed: step.streamed,
    refitted: step.refitted,
    response: step.response,
    log: step.log ?? noted.log,
    error: step.error ?? noted.error,
    upstreamRequestId: step.upstreamRequestId,
    bytesIn: Buffer.isBuffer(input.body) ? input.body.length : undefined,
    bytesOut: step.bytesOut,
    sentAs: undefined,
  }
}

function pathOnly(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
