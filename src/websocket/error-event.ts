import type { CtxgateError } from '../errors.ts'
import { socketFormat } from '../providers/registry.ts'

/**
 * Errors on a Responses socket take the service's own form: the HTTP error body plus its status,
 * as one `{"type":"error","status":…,"error":{…}}` message (Codex reads `status` and `error.code`).
 */
export function errorEvent(status: number, body: { readonly error: Readonly<Record<string, unknown>> }): string {
  return JSON.stringify({ type: 'error', status, error: body.error })
}

export function ctxgateErrorEvent(error: CtxgateError): string {
  return errorEvent(
    error.status,
    JSON.parse(socketFormat.provider.errorShape.body(error.kind, error.message)) as { error: Record<string, unknown> },
  )
}

export function previousResponseNotFound(id: string): string {
  return errorEvent(400, {
    error: {
      type: 'invalid_request_error',
      code: 'previous_response_not_found',
      message: `Previous response with id '${id}' not found.`,
      param: 'previous_response_id',
    },
  })
}
