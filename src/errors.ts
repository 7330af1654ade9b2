/**
 * Every error ctxgate raises itself, with a stable code. Upstream errors are not here: they reach
 * the client exactly as the upstream sent them.
 */
export const errorCatalogue = {
  CTXGATE_CONFIG_INVALID: { status: 500, kind: 'invalid_config' },
  CTXGATE_REQUEST_TOO_LARGE: { status: 413, kind: 'request_too_large' },
  CTXGATE_UNAUTHORIZED: { status: 401, kind: 'unauthorized' },
  CTXGATE_INVALID_REQUEST: { status: 400, kind: 'invalid_request' },
  CTXGATE_REQUEST_TIMEOUT: { status: 408, kind: 'timeout' },
  CTXGATE_HEADERS_TOO_LARGE: { status: 431, kind: 'request_too_large' },
  CTXGATE_CONTEXT_TOO_LONG: { status: 400, kind: 'context_length' },
  CTXGATE_UPSTREAM_TIMEOUT: { status: 504, kind: 'timeout' },
  CTXGATE_UPSTREAM_UNREACHABLE: { status: 502, kind: 'upstream_unreachable' },
  CTXGATE_INTERNAL: { status: 500, kind: 'internal' },
  CTXGATE_OVERLOADED: { status: 503, kind: 'overloaded' },
} as const

export type ErrorCode = keyof typeof errorCatalogue
/** What went wrong, in terms each provider adapter maps to its own error type. */
export type ErrorKind = (typeof errorCatalogue)[ErrorCode]['kind']

const brand = Symbol.for('ctxgate.error')

export class CtxgateError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly kind: ErrorKind
  readonly [brand] = true

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'CtxgateError'
    this.code = code
    this.status = errorCatalogue[code].status
    this.kind = errorCatalogue[code].kind
  }

  static is(value: unknown): value is CtxgateError {
    return typeof value === 'object' && value !== null && brand in value
  }
}

/** Raised once at start-up; the message lists every problem and how to fix it. */
export class ConfigError extends CtxgateError {
  readonly issues: readonly string[]

  constructor(issues: readonly string[]) {
    super('CTXGATE_CONFIG_INVALID', `invalid configuration:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`)
    this.name = 'ConfigError'
    this.issues = issues
  }
}
