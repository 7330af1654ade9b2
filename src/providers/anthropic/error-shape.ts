import type { ErrorKind } from '../../errors.ts'
import type { ErrorShape } from '../error-shape.ts'

/** Anthropic `error.type` per kind (https://docs.claude.com/en/api/errors). */
const typeByKind: Record<ErrorKind, string> = {
  invalid_config: 'api_error',
  request_too_large: 'request_too_large',
  unauthorized: 'authentication_error',
  invalid_request: 'invalid_request_error',
  // With a message that begins as the API's own ("prompt is too long: …"), so clients recover the same way.
  context_length: 'invalid_request_error',
  timeout: 'timeout_error',
  upstream_unreachable: 'api_error',
  internal: 'api_error',
  overloaded: 'overloaded_error',
}

function errorObject(kind: ErrorKind, message: string): string {
  return JSON.stringify({ type: 'error', error: { type: typeByKind[kind], message } })
}

export const anthropicErrorShape: ErrorShape = {
  body: errorObject,
  // Same frame the API itself sends after a 200 (https://docs.claude.com/en/api/messages-streaming, error events).
  streamEvent: (kind, message) => `event: error\ndata: ${errorObject(kind, message)}\n\n`,
}
