import type { ErrorCode } from '../errors.ts'

export interface UpstreamFailure {
  readonly code: ErrorCode
  /** Safe to send again: the upstream never answered this attempt. */
  readonly retryable: boolean
  readonly label: string
}

/** undici and socket error codes, looked up rather than matched in an if-chain. */
const byCode: Record<string, UpstreamFailure> = {
  ECONNREFUSED: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'connection refused' },
  ECONNRESET: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'connection reset' },
  EPIPE: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'connection reset' },
  ENOTFOUND: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'host not found' },
  EAI_AGAIN: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'DNS lookup failed' },
  EHOSTUNREACH: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'host unreachable' },
  ENETUNREACH: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'network unreachable' },
  UND_ERR_SOCKET: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'connection reset' },
  UND_ERR_CLOSED: { code: 'CTXGATE_UPSTREAM_UNREACHABLE', retryable: true, label: 'connection closed' },
  UND_ERR_CONNECT_TIMEOUT: { code: 'CTXGATE_UPSTREAM_TIMEOUT', retryable: true, label: 'connect timeout' },
  // The upstream may still be working on it; a second wait of the same length helps nobody.
  UND_ERR_HEADERS_TIMEOUT: { code: 'CTXGATE_UPSTREAM_TIMEOUT', retryable: false, label: 'no response headers in time' },
  UND_ERR_BODY_TIMEOUT: { code: 'CTXGATE_UPSTREAM_TIMEOUT', retryable: false, label: 'response body stalled' },
}

const unknownFailure: UpstreamFailure = {
  code: 'CTXGATE_UPSTREAM_UNREACHABLE',
  retryable: false,
  label: 'upstream request failed',
}

export function classifyUpstreamError(error: unknown): UpstreamFailure {
  let current: unknown = error
  // undici wraps socket errors; the useful code may sit one or two causes deep.
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && byCode[code]) return byCode[code]
    current = (current as { cause?: unknown }).cause
  }
  return unknownFailure
}
