import { anthropicError } from './anthropic-messages.ts'
import type { Fault } from './faults.ts'
import { openaiError } from './openai-chat.ts'
import type { MockAnswer } from './types.ts'

/** The wire format a mock route speaks. */
export type Provider = 'anthropic' | 'openai'

/** A queued status fault as the provider would send it: its own error shape and retry headers. */
export function statusFault(provider: Provider, fault: Extract<Fault, { kind: 'status' }>): MockAnswer {
  const headers: Record<string, string> = {}
  if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter
  if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs)
  if (fault.shouldRetry !== undefined) headers['x-should-retry'] = String(fault.shouldRetry)
  const anthropicType: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  }
  const message = fault.status === 529 ? 'Overloaded' : `Mock fault: status ${fault.status}`
  const answer =
    provider === 'anthropic'
      ? anthropicError(fault.status, anthropicType[fault.status] ?? 'api_error', message)
      : openaiError(fault.status, fault.status === 429 ? 'rate_limit_error' : 'server_error', message, null)
  return { ...answer, headers } as MockAnswer
}
