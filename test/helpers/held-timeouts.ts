import { expect, vi } from 'vitest'

/**
 * Holds back every setTimeout of exactly `ms` (ctxgate's retry backoff) until the test releases it;
 * all other timers run for real. Unlike global fake timers this leaves the timers undici and the SDKs
 * keep for their sockets alone, so a test moves one wait by hand instead of sleeping through it.
 */
export function holdTimeouts(ms: number) {
  const realSetTimeout = globalThis.setTimeout
  const realClearTimeout = globalThis.clearTimeout
  const held: { readonly run: () => void; readonly handle: NodeJS.Timeout }[] = []
  const cleared = new Set<unknown>()
  const scheduled = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
    callback: (...args: unknown[]) => void,
    delay?: number,
    ...args: unknown[]
  ) => {
    if (delay !== ms) return realSetTimeout(callback, delay, ...args)
    // A real handle (clearTimeout and ref/unref work on it) that never fires by itself.
    const handle = realSetTimeout(() => undefined, 2 ** 31 - 1).unref()
    held.push({ run: () => callback(...args), handle })
    return handle
  }) as typeof setTimeout)
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation((handle) => {
    cleared.add(handle)
    realClearTimeout(handle)
  })
  return {
    /** Resolves once something has asked to wait `ms`. */
    started: () => vi.waitFor(() => expect(held.length).toBeGreaterThan(0), { timeout: 5_000 }),
    /** Whether any timer of this length was asked for. */
    asked: (delay: number) => scheduled.mock.calls.some((call) => call[1] === delay),
    /** Whether every held wait was cancelled before it was released. */
    allCancelled: () => held.every((entry) => cleared.has(entry.handle)),
    /** The held waits end now, as their time would have come (a cancelled one never fires). */
    release: () => {
      for (const entry of held.splice(0)) {
        realClearTimeout(entry.handle)
        if (!cleared.has(entry.handle)) entry.run()
      }
    },
  }
}

/** Lets socket events and callbacks that are already due run: several event-loop turns, no timers. */
export async function settle(): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve))
}
