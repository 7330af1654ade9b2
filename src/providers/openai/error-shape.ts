import type { ErrorKind } from '../../errors.ts'
import type { ErrorShape } from '../error-shape.ts'

const typeByKind: Record<ErrorKind, { type: string; code: string }> = {
  invalid_config: { type: 'server_error', code: 'ctxgate_invalid_config' },
  request_too_large: { type: 'invalid_request_error', code: 'request_too_large' },
  unauthorized: { type: 'invalid_request_error', code: 'ctxgate_unauthorized' },
  invalid_request: { type: 'invalid_request_error', code: 'invalid_request' },
  // The API's own code for a prompt over the window: clients (Codex) key their recovery on it.
  context_length: { type: 'invalid_request_error', code: 'context_length_exceeded' },
  timeout: { type: 'server_error', code: 'upstream_timeout' },
  upstream_unreachable: { type: 'server_error', code: 'upstream_unreachable' },
  internal: { type: 'server_error', code: 'internal_error' },
  overloaded: { type: 'server_error', code: 'ctxgate_overloaded' },
}

function errorObject(kind: ErrorKind, message: string): string {
  const { type, code } = typeByKind[kind]
  return JSON.stringify({ error: { message, type, param: null, code } })
}

export const openaiErrorShape: ErrorShape = {
  body: errorObject,
  // openai-node throws on a data payload that carries `error` (openai-node `Stream`).
  streamEvent: (kind, message) => `data: ${errorObject(kind, message)}\n\n`,
}
