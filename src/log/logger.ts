import { pino, type DestinationStream, type Logger } from 'pino'

/** Paths that could carry a secret if anything ever logs headers or options; values are replaced. */
export const redactedPaths = [
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-ctxgate-auth"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  '*.apiKey',
  '*.api_key',
]

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'ctxgate' }, redact: { paths: redactedPaths, censor: '[redacted]' } }
  return destination ? pino(options, destination) : pino(options)
}
