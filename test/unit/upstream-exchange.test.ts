import type { Dispatcher } from 'undici'
import { describe, expect, it } from 'vitest'
import { Cancellation, CancelledError, cancellableDelay } from '../../src/upstream/cancellation.ts'
import { ResponseBody } from '../../src/upstream/exchange.ts'

/** Records what the body asks of the upstream connection. */
function fakeController(): Dispatcher.DispatchController & { calls: string[] } {
  const calls: string[] = []
  let paused = false
  return {
    calls,
    get aborted() {
      return calls.includes('abort')
    },
    get paused() {
      return paused
    },
    get reason() {
      return null
    },
    pause() {
      paused = true
      calls.push('pause')
    },
    resume() {
      paused = false
      calls.push('resume')
    },
    abort() {
      calls.push('abort')
    },
  }
}

describe('ResponseBody', () => {
  it('hands a chunk straight to a waiting reader, and pauses the connection once more than 64 KiB waits for one', async () => {
    const controller = fakeController()
    const body = new ResponseBody()
    body.attach(controller)
    const waiting = body.next()
    body.push(Buffer.from('a'))
    expect((await waiting).value?.toString()).toBe('a')
    expect(controller.calls).toEqual([])

    body.push(Buffer.alloc(40 * 1024, 'b'))
    expect(controller.calls).toEqual([])
    body.push(Buffer.alloc(40 * 1024, 'c'))
    expect(controller.calls).toEqual(['pause'])
    body.push(Buffer.alloc(10, 'd'))
    expect(controller.calls).toEqual(['pause'])
    expect((await body.next()).value?.[0]).toBe('b'.charCodeAt(0))
    expect((await body.next()).value?.[0]).toBe('c'.charCodeAt(0))
    expect(controller.calls).toEqual(['pause'])
    expect((await body.next()).value?.toString()).toBe('d'.repeat(10))
    expect(controller.calls).toEqual(['pause', 'resume'])
    body.end()
    expect((await body.next()).done).toBe(true)
  })

  it('hands over the chunks already received at once, oldest first, within its limits, resuming a paused connection', async () => {
    const controller = fakeController()
    const body = new ResponseBody()
    body.attach(controller)
    const wide = { totalBytes: 1024 * 1024, chunkBytes: 1024 * 1024 }
    expect(body.takeQueued(wide)).toEqual([])
    body.push(Buffer.alloc(40 * 1024, 'a'))
    body.push(Buffer.alloc(40 * 1024, 'b'))
    body.push(Buffer.alloc(10, 'x'))
    expect(controller.calls).toEqual(['pause'])
    const letters = (chunks: Buffer[]) => chunks.map((chunk) => String.fromCharCode(chunk[0] ?? 0))
    // The oldest is too large for each chunk's limit: nothing is taken, not even what would fit behind it.
    expect(body.takeQueued({ totalBytes: 1024 * 1024, chunkBytes: 4 * 1024 })).toEqual([])
    // Only as many as fit in the total, from the oldest: the connection stays paused while some wait.
    expect(letters(body.takeQueued({ totalBytes: 50 * 1024, chunkBytes: 1024 * 1024 }))).toEqual(['a'])
    expect(controller.calls).toEqual(['pause'])
    expect(letters(body.takeQueued(wide))).toEqual(['b', 'x'])
    expect(controller.calls).toEqual(['pause', 'resume'])
    // What comes after is read as before, and nothing is handed over twice.
    expect(body.takeQueued(wide)).toEqual([])
    body.push(Buffer.from('c'))
    body.end()
    expect((await body.next()).value?.toString()).toBe('c')
    expect((await body.next()).done).toBe(true)
  })

  it('does not pause and resume the parser for a small answer that arrives whole before it is read', async () => {
    const controller = fakeController()
    const body = new ResponseBody()
    body.attach(controller)
    body.push(Buffer.from('{"type":"message"}'))
    body.end()
    expect((await body.next()).value?.toString()).toBe('{"type":"message"}')
    expect((await body.next()).done).toBe(true)
    expect(controller.calls).toEqual([])
  })

  it('ignores the empty chunk undici delivers when resuming, so reading never spins on pause and resume', async () => {
    const controller = fakeController()
    const body = new ResponseBody()
    body.attach(controller)
    body.push(Buffer.alloc(0))
    expect(controller.calls).toEqual([])
    body.push(Buffer.from('x'))
    body.end()
    expect((await body.next()).value?.toString()).toBe('x')
    expect((await body.next()).done).toBe(true)
  })

  it('delivers what arrived before a failure, then the failure', async () => {
    const body = new ResponseBody()
    body.attach(fakeController())
    body.push(Buffer.from('first'))
    body.fail(new Error('socket reset'))
    expect((await body.next()).value?.toString()).toBe('first')
    await expect(body.next()).rejects.toThrow('socket reset')
  })

  it('drains a small refused answer so its connection is reused, and closes one too large to drain', () => {
    const small = fakeController()
    const drained = new ResponseBody()
    drained.attach(small)
    drained.push(Buffer.alloc(100 * 1024))
    drained.discard()
    drained.push(Buffer.alloc(10))
    expect(small.calls).toEqual(['pause', 'resume'])

    const large = fakeController()
    const closed = new ResponseBody()
    closed.attach(large)
    closed.discard()
    closed.push(Buffer.alloc(200 * 1024))
    expect(large.calls).toContain('abort')
  })
})

describe('Cancellation', () => {
  it('runs listeners once, at once for late ones, and not after they unregister', () => {
    const cancellation = new Cancellation()
    const seen: string[] = []
    const stop = cancellation.onCancel(() => seen.push('removed'))
    cancellation.onCancel(() => seen.push('kept'))
    stop()
    cancellation.cancel()
    cancellation.cancel()
    cancellation.onCancel(() => seen.push('late'))
    expect(seen).toEqual(['kept', 'late'])
    expect(cancellation.cancelled).toBe(true)
  })

  it('cuts a retry wait short', async () => {
    const cancellation = new Cancellation()
    const started = performance.now()
    const wait = cancellableDelay(10_000, cancellation)
    setTimeout(() => cancellation.cancel(), 20)
    await expect(wait).rejects.toBeInstanceOf(CancelledError)
    expect(performance.now() - started).toBeLessThan(2_000)
    await expect(cancellableDelay(5, new Cancellation())).resolves.toBeUndefined()
  })
})
