import type { ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from '../config/schema.ts'
import { CtxgateError } from '../errors.ts'
import type { ErrorShape } from '../providers/error-shape.ts'
import { errorShapes, upstreamPath } from '../providers/routes.ts'
import type { ModelLabels, ProxyMetrics } from '../metrics/proxy-metrics.ts'
import { recordRequest, type RecordDeps } from '../metrics/record-request.ts'
import type { SessionTotalsStore } from '../session/accounting.ts'
import { createUsageChunkFilter } from '../stream/hide-usage-chunk.ts'
import { relayResponse, type RelayResult } from '../stream/relay-response.ts'
import type { UpstreamId, Upstreams } from '../upstream/dispatcher.ts'
import { Cancellation } from '../upstream/cancellation.ts'
import { upstreamRequestHeaders, type HeaderMap } from '../upstream/hop-by-hop.ts'
import {
  sendWithRetries,
  UpstreamCallFailed,
  type UpstreamCall,
  type UpstreamReply,
} from '../upstream/send-with-retries.ts'
import { promptTokensOf, type Usage } from '../providers/usage.ts'
import type { Accounting, PrepareBody, Prepared } from './prepare.ts'
import { refitIfTooLong } from './refit.ts'
import type { LiveRecorder } from '../live/live-recorder.ts'

export interface ForwardDeps {
  readonly config: Readonly<Config>
  readonly upstreams: Upstreams
  readonly metrics: ProxyMetrics
  readonly models: ModelLabels
  readonly sessions: SessionTotalsStore
  readonly logger: Logger
  /** State lives in a store other replicas read: what an answer reports must land before the client has it. */
  readonly sharedState: boolean
  /** The live page (/ctxgate/): told about every finished request. */
  readonly live?: LiveRecorder
  /** The configured price table, for billed tokens and dollars. */
  readonly prices?: RecordDeps['prices']
}

export type { PrepareBody }

export interface ForwardInput {
  readonly request: FastifyRequest
  readonly reply: FastifyReply
  readonly upstream: UpstreamId
  /** Route label for logs and metrics: a wire format, or 'passthrough'. */
  readonly route: string
  readonly body: Buffer | Readable | null
  readonly prepare?: PrepareBody | undefined
}

interface Outcome {
  log?: Readonly<Record<string, unknown>>
  accounting?: Accounting
  usage?: Usage
  requestOverheadMs?: number
  responseOverheadMs?: number
  ttfbMs?: number
  promptTokens?: number
  outputTokens?: number
  status: number
  upstreamStatus?: number
  attempts: number
  retries: string[]
  bytesOut: number
  outcome: string
  failOpen?: string
  upstreamRequestId?: string
  error?: string
}

/** Forwards one client request to its upstream and relays the answer; nothing thrown escapes. */
export async function forward(deps: ForwardDeps, input: ForwardInput): Promise<void> {
  const started = performance.now()
  const { request, reply } = input
  const response = reply.raw
  const shape = errorShapes[input.upstream]
  reply.hijack()

  const cancellation = new Cancellation()
  const abortIfClientLeft = (): void => {
    if (!response.writableFinished) cancellation.cancel()
  }
  response.once('close', abortIfClientLeft)

  const outcome: Outcome = { status: 0, attempts: 0, retries: [], bytesOut: 0, outcome: 'complete' }
  try {
    await forwardOnce(deps, input, cancellation, shape, outcome)
  } catch (error) {
    outcome.outcome = 'internal_error'
    outcome.error = error instanceof Error ? error.message : String(error)
    if (!response.headersSent && !response.destroyed) {
      outcome.status = writeError(
        response,
        shape,
        new CtxgateError('CTXGATE_INTERNAL', 'ctxgate failed while handling this request'),
        false,
      )
    } else response.destroy()
  } finally {
    response.off('close', abortIfClientLeft)
  }

  const durationMs = performance.now() - started
  const provider = input.upstream
  try {
    recordRequest(deps, { route: input.route, provider, durationMs, ...outcome })
    deps.live?.recordRequest({ route: input.route, durationMs, ...outcome }, request.headers['user-agent'])
  } catch (error) {
    deps.logger.warn({ error: (error as Error).message }, 'recording metrics failed')
  }
  // The line's object is built only when someone reads it.
  if (!deps.logger.isLevelEnabled('info')) return
  deps.logger.info(
    {
      reqId: request.id,
      method: request.method,
      path: pathOnly(request.url),
      route: input.route,
      upstream: provider,
      status: outcome.status,
      upstreamStatus: outcome.upstreamStatus,
      attempts: outcome.attempts,
      retries: outcome.retries.length > 0 ? outcome.retries : undefined,
      durationMs: Math.round(durationMs * 100) / 100,
      bytesIn: Buffer.isBuffer(input.body) ? input.body.length : undefined,
      bytesOut: outcome.bytesOut,
      outcome: outcome.outcome,
      failOpen: outcome.failOpen,
      upstreamRequestId: outcome.upstreamRequestId,
      promptTokens: outcome.promptTokens,
      outputTokens: outcome.outputTokens,
      tokens: outcome.usage,
      prefixBreak: outcome.accounting?.prefixBreak,
      ...outcome.log,
      error: outcome.error,
    },
    'request',
  )
}

async function forwardOnce(
  deps: ForwardDeps,
  input: ForwardInput,
  cancellation: Cancellation,
  shape: ErrorShape,
  outcome: Outcome,
): Promise<void> {
  const started = performance.now()
  const { request } = input
  const response = input.reply.raw
  const url = request.raw.url ?? '/'
  // Only origin-form targets: an absolute URI must never choose the host (upstreams come from config).
  if (!url.startsWith('/')) {
    outcome.outcome = 'rejected'
    outcome.status = writeError(
      response,
      shape,
      new CtxgateError(
        'CTXGATE_INVALID_REQUEST',
        'ctxgate accepts only origin-form request targets (a path starting with "/")',
      ),
      false,
    )
    return
  }

  const headers = upstreamRequestHeaders(request.headers)
  let body = input.body
  let prepared: Prepared | undefined
  if (Buffer.isBuffer(body) && input.prepare) {
    try {
      const result = await input.prepare(body, request.headers)
      outcome.log = result.kind === 'reject' ? result.log : result.prepared.log
      const accounting = result.kind === 'reject' ? result.accounting : result.prepared.accounting
      if (accounting) outcome.accounting = accounting
      if (result.kind === 'reject') {
        outcome.outcome = 'rejected'
        outcome.status = writeError(response, shape, result.error, true)
        return
      }
      prepared = result.prepared
      body = prepared.body
      mergeHeaders(headers, prepared.headers)
    } catch (error) {
      outcome.failOpen = 'prepare'
      outcome.error = error instanceof Error ? error.message : String(error)
    }
  } else if (body !== null && !Buffer.isBuffer(body) && request.headers['content-length'] !== undefined) {
    headers['content-length'] = request.headers['content-length']
  }

  const upstream = deps.upstreams[input.upstream]
  const call: UpstreamCall = {
    upstream,
    method: request.method,
    path: upstreamPath(input.upstream, upstream.basePath, url),
    headers,
    body,
    cancellation,
    policy: deps.config.retry,
    onRetry: (reason) => outcome.retries.push(reason),
  }
  let reply: UpstreamReply
  outcome.requestOverheadMs = performance.now() - started
  try {
    reply = await sendWithRetries(call)
    if (reply.status === 400 && prepared?.refit) {
      const refitted = await refitIfTooLong(reply, prepared, call)
      if (refitted.prepared !== prepared) {
        outcome.attempts += reply.attempts
        outcome.log = refitted.prepared.log
      }
      reply = refitted.reply
      prepared = refitted.prepared
    }
  } catch (error) {
    if (cancellation.cancelled) {
      outcome.outcome = 'client_closed'
      outcome.attempts += outcome.retries.length + 1
      return
    }
    if (!(error instanceof UpstreamCallFailed)) throw error
    outcome.attempts += error.attempts
    outcome.outcome = 'upstream_unreachable'
    outcome.error = error.failure.label
    const code = error.failure.code
    const message =
      `ctxgate could not get an answer from the ${input.upstream} API: ${error.failure.label}` +
      (error.attempts > 1 ? ` (after ${error.attempts} attempts)` : '')
    outcome.status = writeError(response, shape, new CtxgateError(code, message), error.exhausted)
    return
  }

  const replyAt = performance.now()
  outcome.ttfbMs = reply.firstByteMs
  if (prepared?.accounting) outcome.accounting = prepared.accounting
  outcome.attempts += reply.attempts
  outcome.upstreamStatus = reply.status
  outcome.status = reply.status
  outcome.upstreamRequestId = firstHeader(reply.headers['request-id'] ?? reply.headers['x-request-id'])
  const usage = prepared?.usageReader?.()
  // Recorded before the client has the whole answer, so its next request sees the result on any replica.
  const settle = async (plainBody: Buffer | undefined): Promise<void> => {
    if (!usage || reply.status !== 200) return
    const reported = plainBody ? parseUsage(usage, plainBody) : usage.result()
    if (!reported) return
    outcome.usage = reported
    outcome.promptTokens = promptTokensOf(reported)
    outcome.outputTokens = reported.outputTokens
    await prepared?.onUsage?.(reported)
  }
  const relayed: RelayResult = await relayResponse({
    reply,
    response,
    errorShape: shape,
    // Tell the SDK not to multiply retries ctxgate already made (model-apis §5.3).
    ...(reply.exhausted ? { extraHeaders: { 'x-should-retry': 'false' } } : {}),
    ...(usage
      ? {
          onEvent: (event) => usage.onEvent(event),
          plainUpTo: jsonCopyLimit,
          settle,
          usageComplete: () => usage.complete(),
          settleFirst: deps.sharedState,
        }
      : {}),
    ...(prepared?.hideUsageChunk ? { filter: createUsageChunkFilter() } : {}),
    abortUpstream: () => cancellation.cancel(),
  })
  if (relayed.firstWriteAt !== undefined) outcome.responseOverheadMs = relayed.firstWriteAt - replyAt
  outcome.bytesOut = relayed.bytes
  outcome.outcome = relayed.outcome
  if (relayed.failure) outcome.error = relayed.failure
}

/** JSON answers up to this size are read for their usage. */
const jsonCopyLimit = 4 * 1024 * 1024
function parseUsage(
  reader: NonNullable<ReturnType<NonNullable<Prepared['usageReader']>>>,
  copy: Buffer,
): ReturnType<typeof reader.result> {
  try {
    return reader.fromJson(JSON.parse(copy.toString('utf8')))
  } catch {
    return undefined
  }
}

function mergeHeaders(headers: HeaderMap, extra: Readonly<Record<string, string>> | undefined): void {
  for (const [name, value] of Object.entries(extra ?? {})) {
    const existing = headers[name]
    if (name === 'anthropic-beta' && existing !== undefined) {
      // Merge, never replace, the client's betas (DESIGN §1).
      const betas = new Set(
        [...String(existing).split(','), ...value.split(',')].map((beta) => beta.trim()).filter(Boolean),
      )
      headers[name] = [...betas].join(',')
    } else headers[name] = value
  }
}

/** Writes a ctxgate error in the provider's shape and returns its status. */
export function writeError(
  response: ServerResponse,
  shape: ErrorShape,
  error: CtxgateError,
  doNotRetry: boolean,
): number {
  const body = shape.body(error.kind, error.message)
  const headers: HeaderMap = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-ctxgate-error-code': error.code,
  }
  if (doNotRetry) headers['x-should-retry'] = 'false'
  response.writeHead(error.status, headers)
  response.end(body)
  return error.status
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function pathOnly(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
