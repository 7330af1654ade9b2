import type { Readable } from 'node:stream'
import { cancellableDelay, type Cancellation } from './cancellation.ts'
import type { Upstream } from './dispatcher.ts'
import { exchange, type ResponseBody } from './exchange.ts'
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
  readonly onRetry?: (reason: RetryReason, delayMs: number) => void
}

export interface UpstreamReply {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  /** The first body chunk, already read (null for an empty body). */
  readonly firstChunk: Buffer | null
  /** The rest of the body. */
  readonly rest: AsyncIterator<Buffer>
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
    let status: number | undefined
    let headers: UpstreamReply['headers'] = {}
    let failure: { error: unknown; kind: UpstreamFailure } | undefined
    let body: ResponseBody | undefined
    try {
      const response = await exchange(
        call.upstream.dispatcher,
        { origin: call.upstream.origin, path: call.path, method: call.method, headers: call.headers, body: call.body },
        call.cancellation,
      )
      status = response.status
      headers = response.headers
      body = response.body
    } catch (error) {
      if (call.cancellation.cancelled) throw error
      failure = { error, kind: classifyUpstreamError(error) }
    }

    const decision = failure
      ? failure.kind.retryable
        ? decideRetry({ status: undefined, headers: {}, attempt, waitedMs }, policy)
        : { retry: false as const }
      : decideRetry({ status, headers, attempt, waitedMs }, policy)

    if (!decision.retry && body && status !== undefined) {
      try {
        const first = await body.next()
        const exhausted = attempt > 1 && attempt >= policy.maxAttempts && isRetryableStatus(status)
        return {
          status,
          headers,
          firstChunk: first.done ? null : first.value,
          rest: body,
          attempts: attempt,
          exhausted,
          firstByteMs: performance.now() - started,
        }
      } catch (error) {
        if (call.cancellation.cancelled) throw error
        // Reset after headers, before any byte: nothing reached the client, so it may be sent again.
        failure = { error, kind: classifyUpstreamError(error) }
        const again = failure.kind.retryable
          ? decideRetry({ status: undefined, headers: {}, attempt, waitedMs }, policy)
          : { retry: false as const }
        if (!again.retry)
          throw new UpstreamCallFailed(
            failure.kind,
            attempt,
            failure.kind.retryable && attempt > 1 && attempt >= policy.maxAttempts,
            error,
          )
        await waitBeforeRetry(call, again.reason, again.delayMs)
        waitedMs += again.delayMs
        continue
      }
    }
    if (!decision.retry) {
      const kind = failure?.kind ?? classifyUpstreamError(undefined)
      throw new UpstreamCallFailed(
        kind,
        attempt,
        kind.retryable && attempt > 1 && attempt >= policy.maxAttempts,
        failure?.error,
      )
    }
    // Drain the refused answer so its connection goes back to the pool.
    body?.discard()
    await waitBeforeRetry(call, decision.reason, decision.delayMs)
    waitedMs += decision.delayMs
  }
}

async function waitBeforeRetry(call: UpstreamCall, reason: RetryReason, delayMs: number): Promise<void> {
  call.onRetry?.(reason, delayMs)
  await cancellableDelay(delayMs, call.cancellation)
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}
