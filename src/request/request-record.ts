import type { ResponseFacts, Usage } from '../model-call/usage.ts'
import type { AttemptTiming } from '../upstream/send-with-retries.ts'
import type { Accounting } from './prepared.ts'

/** The W3C trace context a client sent (traceparent, tracestate), which a request's span joins. */
export interface TraceContextHeaders {
  readonly traceparent?: string | string[] | undefined
  readonly tracestate?: string | string[] | undefined
}

/**
 * Everything one request leaves behind, built once when it ends (HTTP or a socket's response): the
 * metrics, session totals, live page, trace and log line all read it.
 */
export interface RequestRecord {
  readonly route: string
  readonly provider: string
  readonly status: number
  readonly outcome: string
  readonly upstreamStatus?: number
  readonly attempts: number
  readonly retries: readonly string[]
  readonly failOpen?: string
  readonly durationMs: number
  /** In ctxgate before the upstream call (parse, rewrite). */
  readonly requestOverheadMs?: number
  /** In ctxgate between the first upstream byte and the first client byte. */
  readonly responseOverheadMs?: number
  readonly ttfbMs?: number
  readonly usage?: Usage
  readonly accounting?: Accounting
  /** performance.now() when the request arrived: where its span starts. */
  readonly startedAt?: number
  /** The client's traceparent and tracestate: the span joins the client's trace. */
  readonly traceContext?: TraceContextHeaders
  /** Each upstream attempt (retries and a refit's included): the span's children. */
  readonly upstreamAttempts?: readonly AttemptTiming[]
  /** The answer was a stream (SSE, or socket events). */
  readonly streamed?: boolean
  /** The upstream refused the first request for its length and a smaller one was sent. */
  readonly refitted?: boolean
  /** The answer's id, model and finish reasons (gen_ai.response.*). */
  readonly response?: ResponseFacts | undefined
  /** Fields for the log line from the request side (the rewrite report, the session, a refit). */
  readonly log?: Readonly<Record<string, unknown>> | undefined
  /** Why the request failed, or what failed and was skipped. */
  readonly error?: string | undefined
  readonly upstreamRequestId?: string | undefined
  readonly bytesIn?: number | undefined
  readonly bytesOut?: number | undefined
  /** On a socket: `as-sent` (the client's bytes) or `full-input` (ctxgate's edited request without previous_response_id). */
  readonly sentAs?: string | undefined
}
