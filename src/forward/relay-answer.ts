import { relayResponse } from '../stream/relay-response.ts'
import type { Cancellation } from '../upstream/cancellation.ts'
import type { HeaderMap } from '../upstream/hop-by-hop.ts'
import { firstHeader, isEventStream } from '../util/headers.ts'
import { AnswerUsage } from './answer-usage.ts'
import type { ForwardDeps, ForwardInput, ForwardResult } from './forward-types.ts'
import type { SentRequest } from './send-upstream.ts'

/** JSON answers up to this size are read for their usage. */
const jsonCopyLimit = 4 * 1024 * 1024

export interface RelayAnswerInput {
  readonly deps: ForwardDeps
  readonly input: ForwardInput
  readonly sent: Extract<SentRequest, { kind: 'replied' }>
  readonly cancellation: Cancellation
  /** ctxgate's own headers saying what it did to the request (x-ctxgate-*), when asked for. */
  readonly ownHeaders?: HeaderMap | undefined
}

/** Relays the upstream's answer to the client, reading its usage on the way (SSE or plain JSON). */
export async function relayAnswer({
  deps,
  input,
  sent,
  cancellation,
  ownHeaders,
}: RelayAnswerInput): Promise<ForwardResult> {
  const { reply, prepared } = sent
  const replyAt = performance.now()
  const usage = prepared?.followUp ? new AnswerUsage(prepared.followUp, reply.status) : undefined
  const filter = prepared?.hideUsageChunk ? input.format?.hideRequestedUsage?.() : undefined
  // Tell the SDK not to multiply retries ctxgate already made.
  const extraHeaders = reply.exhausted ? { ...ownHeaders, 'x-should-retry': 'false' } : ownHeaders
  const relayed = await relayResponse({
    reply,
    response: input.reply.raw,
    errorShape: input.provider.errorShape,
    ...(extraHeaders ? { extraHeaders } : {}),
    ...(usage ? { usage, plainUpTo: jsonCopyLimit, settleFirst: deps.sharedState } : {}),
    ...(filter ? { filter } : {}),
    abortUpstream: () => cancellation.cancel(),
    ...(deps.openStreams ? { openStreams: deps.openStreams } : {}),
  })
  const usageReported = usage?.usage
  return {
    status: reply.status,
    outcome: relayed.outcome,
    attempts: sent.earlierAttempts + reply.attempts,
    upstreamStatus: reply.status,
    upstreamRequestId: firstHeader(reply.headers[input.provider.requestIdHeader]),
    bytesOut: relayed.bytes,
    // The refit's log (re-planned, `refit: true`) replaces the first plan's.
    log: sent.refitted ? prepared?.log : undefined,
    accounting: prepared?.accounting,
    usage: usageReported,
    error: relayed.failure,
    responseOverheadMs: relayed.firstWriteAt === undefined ? undefined : relayed.firstWriteAt - replyAt,
    ttfbMs: reply.firstByteMs,
    streamed: isEventStream(reply.headers['content-type']),
    refitted: sent.refitted,
    response: usage?.response(),
  }
}
