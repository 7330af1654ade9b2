import type { ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import { CtxgateError } from '../errors.ts'
import { writeError } from '../forward/write-error.ts'
import type { Provider } from '../providers/provider-contract.ts'

/** Where a request that could not be read was going, and how to answer it. */
export interface UnreadableAt {
  readonly log: FastifyBaseLogger
  readonly url: string
  readonly bodyLimit: number
  readonly response: ServerResponse
}

/**
 * A request that could not be read (too large, a bad length, cut off), answered in the provider's
 * own shape and logged; fastify's error handler and the model-call fast path both answer here.
 */
export function answerUnreadableRequest(
  error: { readonly code?: string; readonly statusCode?: number; readonly message: string },
  at: UnreadableAt,
  provider: Provider,
): void {
  const tooLarge = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413
  const ctxError = tooLarge
    ? new CtxgateError(
        'CTXGATE_REQUEST_TOO_LARGE',
        `Request exceeds the maximum size ctxgate accepts (${at.bodyLimit} bytes); it was not forwarded.`,
      )
    : new CtxgateError('CTXGATE_INVALID_REQUEST', `ctxgate could not read this request: ${error.message}`)
  at.log.warn({ code: ctxError.code, path: at.url.split('?')[0] }, 'request rejected')
  writeError(at.response, provider.errorShape, ctxError, { doNotRetry: true })
}
