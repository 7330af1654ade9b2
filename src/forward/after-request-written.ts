/**
 * Resolves once undici has written a request dispatched in this turn: undici writes on a kept-alive
 * connection from a setImmediate of its own, queued at dispatch (it first lets the idle socket report
 * a close), so one queued after it runs once the bytes are on their way.
 */
export function afterTheRequestIsWritten(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
