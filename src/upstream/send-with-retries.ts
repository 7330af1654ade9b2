import type { Readable } from 'node:stream'
import { cancellableDelay, type Cancellation } from './cancellation.ts'
import type { Upstream } from './dispatcher.ts'
import { exchange, type BodyChunks } from './exchange.ts'
import type { HeaderMap } from './hop-by-hop.ts'
import { classifyUpstreamError, type UpstreamFailure } from './classify-error.ts'
import { decideRetry, type RetryPolicy, type RetryReason } from './retry-policy.ts'

export interface UpstreamCall {
  readonly upstream: Upstream
  readonly method: string
  /** Path and query, starting with '/', already joined with the upstream's base path. */
  readonly path: string
  readonly headers: HeaderMap
  /** A buffer can be sent again; a stream is sent once, so it is never retried. */
  readonly body: Buffer | Readable | null
  readonly cancellation: Cancellation
  readonly policy: RetryPolicy
  /** The upstream's overload status (the provider registry's), retried under its own reason. */
  readonly overloadStatus?: number | undefined
  readonly onRetry?: (reason: RetryReason, delayMs: number) => void
  /** Told when each attempt ends, whichever way (the trace's child spans). */
  readonly onAttempt?: (attempt: AttemptTiming) => void
}

/** One attempt as the trace shows it: when it ran (performance.now()) and how it ended. */
export interface AttemptTiming {
  readonly startedAt: number
  /** The first body byte (or the end of an empty body) arrived, or the attempt failed or was refused. */
  readonly endedAt: number
  readonly status?: number
  /** The attempt was retried for this reason. */
  readonly retry?: RetryReason
  /** The connection failed (classify-error.ts's label). */
  readonly failure?: string
}

export interface UpstreamReply {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  /** The first body chunk, already read (null for an empty body). */
  readonly firstChunk: Buffer | null
  /** The rest of the body. */
  readonly rest: BodyChunks
  readonly attempts: number
  /** True when ctxgate stopped because it used every attempt it had, not because the answer was final. */
  readonly exhausted: boolean
  /** Milliseconds from the call until the first body chunk (or end of body) arrived. */
  readonly firstByteMs: number
}

export class UpstreamCallFailed extends Error {
  readonly failure: UpstreamFailure
  readonly attempts: number
  readonly exhausted: boolean

  constructor(failure: UpstreamFailure, attempts: number, exhausted: boolean, cause: unknown) {
    super(failure.label, { cause })
    this.name = 'UpstreamCallFailed'
    this.failure = failure
    this.attempts = attempts
    this.exhausted = exhausted
  }
}

/**
 * Calls the upstream, retrying only while nothing has been sent to the client. An answer counts
 * once its first body byte has arrived, so a reset between headers and body is retried too.
 */
export async function sendWithRetries(call: UpstreamCall): Promise<UpstreamReply> {
  const started = performance.now()
  const policy = call.body === null || Buffer.isBuffer(call.body) ? call.policy : { ...call.policy, maxAttempts: 1 }
  let waitedMs = 0
  for (let attempt = 1; ; attempt++) {
    const step = await attemptOnce(call, policy, { attempt, waitedMs, started })
    if (step.kind === 'answered') return step.reply
    if (step.kind === 'failed') throw step.error
    await waitBeforeRetry(call, step.reason, step.delayMs)
    waitedMs += step.delayMs
  }
}

interface AttemptContext {
  readonly attempt: number
  readonly waitedMs: number
  /** performance.now() when the call began (the first byte time counts retries). */
  readonly started: number
}

type AttemptStep =
  | { readonly kind: 'answered'; readonly reply: UpstreamReply }
  | { readonly kind: 'failed'; readonly error: UpstreamCallFailed }
  | { readonly kind: 'retry'; readonly reason: RetryReason; readonly delayMs: number; readonly status?: number }

/** One attempt: send, decide on the status, then wait for the first body byte. */
async function attemptOnce(call: UpstreamCall, policy: RetryPolicy, context: AttemptContext): Promise<AttemptStep> {
  const startedAt = performance.now()
  const step = await attemptSteps(call, policy, context)
  if (call.onAttempt) call.onAttempt(attemptTiming(startedAt, step))
  return step
}

function attemptTiming(startedAt: number, step: AttemptStep & { readonly status?: number }): AttemptTiming {
  const endedAt = performance.now()
  if (step.kind === 'answered') return { startedAt, endedAt, status: step.reply.status }
  if (step.kind === 'retry')
    return step.status === undefined
      ? { startedAt, endedAt, retry: step.reason }
      : { startedAt, endedAt, status: step.status, retry: step.reason }
  return { startedAt, endedAt, failure: step.error.failure.label }
}

async function attemptSteps(call: UpstreamCall, policy: RetryPolicy, context: AttemptContext): Promise<AttemptStep> {
  let response: Awaited<ReturnType<typeof exchange>>
  try {
    response = await exchange(
      call.upstream.dispatcher,
      { origin: call.upstream.origin, path: call.path, method: call.method, headers: call.headers, body: call.body },
      call.cancellation,
    )
  } catch (error) {
    if (call.cancellation.cancelled) throw error
    return afterFailure(error, policy, context)
  }
  const { status, headers, body } = response
  const decision = decideRetry(
    { status, headers, attempt: context.attempt, waitedMs: context.waitedMs, overloadStatus: call.overloadStatus },
    policy,
  )
  if (decision.retry) {
    // Drain the refused answer so its connection goes back to the pool.
    body.discard()
    return { kind: 'retry', reason: decision.reason, delayMs: decision.delayMs, status }
  }
  try {
    const first = await body.next()
    const exhausted = context.attempt > 1 && context.attempt >= policy.maxAttempts && isRetryableStatus(status)
    const reply: UpstreamReply = {
      status,
      headers,
      firstChunk: first.done ? null : first.value,
      rest: body,
      attempts: context.attempt,
      exhausted,
      firstByteMs: performance.now() - context.started,
    }
    return { kind: 'answered', reply }
  } catch (error) {
    if (call.cancellation.cancelled) throw error
    // Reset after headers, before any byte: nothing reached the client, so it may be sent again.
    return afterFailure(error, policy, context)
  }
}

/** A failed attempt is retried when the failure is retryable and the policy has attempts left. */
function afterFailure(error: unknown, policy: RetryPolicy, context: AttemptContext): AttemptStep {
  const kind = classifyUpstreamError(error)
  const decision = kind.retryable
    ? decideRetry({ status: undefined, headers: {}, attempt: context.attempt, waitedMs: context.waitedMs }, policy)
    : { retry: false as const }
  if (decision.retry) return { kind: 'retry', reason: decision.reason, delayMs: decision.delayMs }
  const exhausted = kind.retryable && context.attempt > 1 && context.attempt >= policy.maxAttempts
  return { kind: 'failed', error: new UpstreamCallFailed(kind, context.attempt, exhausted, error) }
}

async function waitBeforeRetry(call: UpstreamCall, reason: RetryReason, delayMs: number): Promise<void> {
  call.onRetry?.(reason, delayMs)
  await cancellableDelay(delayMs, call.cancellation)
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}
