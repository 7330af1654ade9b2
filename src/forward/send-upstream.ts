import { CtxgateError } from '../errors.ts'
import type { Prepared } from '../request/prepared.ts'
import {
  sendWithRetries,
  UpstreamCallFailed,
  type UpstreamCall,
  type UpstreamReply,
} from '../upstream/send-with-retries.ts'
import type { ForwardInput, ForwardResult } from './forward-types.ts'
import { refitIfRefused, type RefusalReaders } from './refit.ts'
import { writeError } from './write-error.ts'

export type SentRequest =
  /** The upstream answered; `prepared` is what was finally sent (the refit's, after a length refusal). */
  | {
      readonly kind: 'replied'
      readonly reply: UpstreamReply
      readonly prepared: Prepared | undefined
      /** The first request was refused for its length and replaced by a smaller one. */
      readonly refitted: boolean
      /** Attempts spent on a first request the refit replaced. */
      readonly earlierAttempts: number
    }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'failed'; readonly failure: UpstreamCallFailed }

/** Sends the request (with retries before the first byte); a length refusal (a 400, or in-stream) is re-planned and sent once more. */
export async function sendWithRefit(
  call: UpstreamCall,
  prepared: Prepared | undefined,
  readers: RefusalReaders | undefined,
): Promise<SentRequest> {
  try {
    const reply = await sendWithRetries(call)
    if (!prepared?.followUp?.replannable)
      return { kind: 'replied', reply, prepared, refitted: false, earlierAttempts: 0 }
    const refitted = await refitIfRefused(reply, prepared, call, readers)
    const replaced = refitted.prepared !== prepared
    return {
      kind: 'replied',
      reply: refitted.reply,
      prepared: refitted.prepared,
      refitted: replaced,
      earlierAttempts: replaced ? reply.attempts : 0,
    }
  } catch (error) {
    if (call.cancellation.cancelled) return { kind: 'cancelled' }
    if (error instanceof UpstreamCallFailed) return { kind: 'failed', failure: error }
    throw error
  }
}

/** No answer came: the client left (nothing to write), or the upstream could not be reached (a 502/504 in its shape). */
export function answerUpstreamFailure(
  input: ForwardInput,
  sent: Exclude<SentRequest, { kind: 'replied' }>,
  retries: number,
): ForwardResult {
  if (sent.kind === 'cancelled') return { outcome: 'client_closed', status: 0, attempts: retries + 1 }
  const { failure } = sent
  const message =
    `ctxgate could not get an answer from the ${input.provider.upstream} API: ${failure.failure.label}` +
    (failure.attempts > 1 ? ` (after ${failure.attempts} attempts)` : '')
  const status = writeError(
    input.reply.raw,
    input.provider.errorShape,
    new CtxgateError(failure.failure.code, message),
    { doNotRetry: failure.exhausted },
  )
  return { outcome: 'upstream_unreachable', status, attempts: failure.attempts, error: failure.failure.label }
}
