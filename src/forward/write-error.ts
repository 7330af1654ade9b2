import type { ServerResponse } from 'node:http'
import type { CtxgateError } from '../errors.ts'
import type { ErrorShape } from '../providers/error-shape.ts'
import type { HeaderMap } from '../upstream/hop-by-hop.ts'

export interface WriteErrorOptions {
  /** Adds `x-should-retry: false`: the SDK must not send the same request again (it would fail the same way). */
  readonly doNotRetry: boolean
  /** ctxgate's own headers saying what it did to the request, when asked for. */
  readonly extraHeaders?: HeaderMap | undefined
}

/** Writes a ctxgate error in the provider's shape and returns its status. */
export function writeError(
  response: ServerResponse,
  shape: ErrorShape,
  error: CtxgateError,
  options: WriteErrorOptions,
): number {
  const body = shape.body(error.kind, error.message)
  const headers: HeaderMap = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-ctxgate-error-code': error.code,
  }
  if (options.doNotRetry) headers['x-should-retry'] = 'false'
  if (options.extraHeaders) Object.assign(headers, options.extraHeaders)
  response.writeHead(error.status, headers)
  response.end(body)
  return error.status
}
