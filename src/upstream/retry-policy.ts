import { firstHeader } from '../util/headers.ts'

/**
 * When to try the upstream again, before the first byte has reached the client. Mirrors the
 * official SDKs (their `shouldRetry` in anthropic-sdk-typescript and openai-node) so ctxgate's retries and theirs agree on what is worth retrying.
 */
export interface RetryPolicy {
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly maxTotalWaitMs: number
}

/** An upstream's own overload status (the provider registry's `overloadStatus`) as its retry reason. */
export type OverloadReason = `status_${number}`

export type RetryReason =
  'connection' | 'status_408' | 'status_409' | 'status_429' | 'status_5xx' | OverloadReason | 'should_retry_header'

/** The reasons every upstream may retry for, its overload status apart. */
export const commonRetryReasons: readonly RetryReason[] = [
  'connection',
  'status_408',
  'status_409',
  'status_429',
  'status_5xx',
  'should_retry_header',
]

export function overloadReason(status: number): OverloadReason {
  return `status_${status}`
}

export type RetryDecision =
  { readonly retry: false } | { readonly retry: true; readonly delayMs: number; readonly reason: RetryReason }

export interface AttemptOutcome {
  /** Upstream status, or undefined when the attempt failed to connect or was reset before headers. */
  readonly status: number | undefined
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** Attempts made so far, this one included. */
  readonly attempt: number
  /** Milliseconds already spent waiting between attempts. */
  readonly waitedMs: number
  /** The upstream's overload status (from the provider registry), counted apart from other 5xx. */
  readonly overloadStatus?: number | undefined
}

const noRetry: RetryDecision = { retry: false }

export function decideRetry(
  outcome: AttemptOutcome,
  policy: RetryPolicy,
  random: () => number = Math.random,
): RetryDecision {
  if (outcome.attempt >= policy.maxAttempts) return noRetry
  const reason = retryReason(outcome)
  if (reason === undefined) return noRetry
  const delayMs = outcome.status === undefined ? undefined : retryAfterMs(outcome.headers)
  const wait = delayMs ?? backoffMs(outcome.attempt, policy, random)
  if (outcome.waitedMs + wait > policy.maxTotalWaitMs) return noRetry
  return { retry: true, delayMs: wait, reason }
}

function retryReason({ status, headers, overloadStatus }: AttemptOutcome): RetryReason | undefined {
  if (status === undefined) return 'connection'
  // The same request gets the same 400 every time, whatever the upstream hints.
  if (status === 400) return undefined
  const hint = firstHeader(headers['x-should-retry'])
  if (hint === 'false') return undefined
  if (status === 408) return 'status_408'
  if (status === 409) return 'status_409'
  if (status === 429) return 'status_429'
  if (status === overloadStatus) return overloadReason(status)
  if (status >= 500) return 'status_5xx'
  if (hint === 'true') return 'should_retry_header'
  return undefined
}

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: AttemptOutcome['headers'], now: number = Date.now()): number | undefined {
  const ms = Number.parseFloat(firstHeader(headers['retry-after-ms']) ?? '')
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms)
  const raw = firstHeader(headers['retry-after'])
  if (raw === undefined) return undefined
  const seconds = Number.parseFloat(raw)
  if (Number.isFinite(seconds) && seconds >= 0 && /^\s*[\d.]+\s*$/.test(raw)) return Math.round(seconds * 1000)
  const date = Date.parse(raw)
  if (Number.isFinite(date)) return Math.max(0, date - now)
  return undefined
}

/** Exponential from baseDelayMs, capped, with up to 25% taken off at random (as the SDKs do). */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number): number {
  const exponential = Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs)
  return Math.round(exponential * (1 - random() * 0.25))
}
