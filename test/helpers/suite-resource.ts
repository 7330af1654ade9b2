import { afterAll, beforeAll } from 'vitest'

/**
 * Something the enclosing suite shares: started before its first test, closed after its last. The
 * returned function gives it to a test, and throws if called outside one.
 */
export function suiteResource<T>(start: () => Promise<T>, close: (resource: T) => unknown): () => T {
  let started: T | undefined
  beforeAll(async () => {
    started = await start()
  })
  afterAll(async () => {
    if (started !== undefined) await close(started)
  })
  return () => {
    if (started === undefined) throw new Error('used outside the suite that started it')
    return started
  }
}
