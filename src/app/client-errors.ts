import type { Duplex } from 'node:stream'
import { CtxgateError, type ErrorCode } from '../errors.ts'

/**
 * Answers a request Node could not even parse (bad framing, headers too large, too slow to arrive).
 * Its headers are unknown, so the provider is too: the body carries both error shapes at once
 * (Anthropic's `type` + `error.type`, OpenAI's `error.code` + `error.param`), so either SDK reads
 * `error.message`; `x-ctxgate-error-code` says which of ctxgate's codes it is. The raw packet is
 * never logged: it may hold keys.
 */
export function clientErrorAnswerer(logger: {
  trace: (fields: object, message: string) => void
}): (error: Error & { code?: string }, socket: Duplex) => void {
  return (error, socket) => answerClientError(logger, error, socket)
}

function answerClientError(
  logger: { trace: (fields: object, message: string) => void },
  error: Error & { code?: string },
  socket: Duplex,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const failure = clientFailure(error.code)
  logger.trace({ code: error.code, reason: error.message, answered: failure.code }, 'client error')
  if (socket.writable) {
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', code: failure.code, param: null, message: failure.message },
    })
    socket.write(
      `HTTP/1.1 ${failure.status} ${statusText[failure.status] ?? 'Bad Request'}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-ctxgate-error-code: ${failure.code}\r\nx-should-retry: false\r\nconnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

const statusText: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

function clientFailure(nodeCode: string | undefined): CtxgateError {
  const [code, message]: [ErrorCode, string] =
    nodeCode === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ['CTXGATE_REQUEST_TIMEOUT', 'ctxgate did not receive the whole request in time (server.requestTimeoutMs)']
      : nodeCode === 'HPE_HEADER_OVERFLOW'
        ? ['CTXGATE_HEADERS_TOO_LARGE', 'the request headers are larger than ctxgate accepts']
        : [
            'CTXGATE_INVALID_REQUEST',
            'ctxgate could not parse this HTTP request (malformed request line, header or length)',
          ]
  return new CtxgateError(code, message)
}
