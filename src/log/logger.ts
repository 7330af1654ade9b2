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
  // Node's parse errors carry the raw request bytes, headers and keys included (fastify logs them at trace).
  'err.rawPacket',
  'error.rawPacket',
]

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'ctxgate' }, redact: { paths: redactedPaths, censor: '[redacted]' } }
  return pino(options, destination ?? asyncStdout())
}

/** Buffered log lines are written at least this often, so a quiet proxy's lines still show up promptly. */
const flushIntervalMs = 100

/**
 * stdout written in batches: lines gather in a buffer and leave in one write when it holds 4 KB or
 * every 100 ms. A synchronous write per request line cost about 30 µs of CPU per request under load
 * (BENCHMARKS.md). pino writes what is still buffered when the process exits.
 */
function asyncStdout(): DestinationStream {
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 })
  setInterval(() => stdout.flush(), flushIntervalMs).unref()
  return stdout
}
