import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import type { HookRequest, RewriteHookDeps } from '../../src/forward/rewrite-hook/hook-request.ts'
import { prepareInWorker } from '../../src/forward/rewrite-workers/prepare-in-worker.ts'
import type { RewriteWorkers, WorkerLease } from '../../src/forward/rewrite-workers/pool.ts'
import type { ReadJob } from '../../src/forward/rewrite-workers/protocol.ts'
import { chatFormat } from '../../src/providers/registry.ts'

/** A pool whose one worker leaves every body alone, and keeps what it was handed. */
function recordingPool(handed: Omit<ReadJob, 'kind'>[]): RewriteWorkers {
  const lease: WorkerLease = {
    read: (job) => {
      handed.push(job)
      return Promise.resolve({ kind: 'untouched', reason: 'disabled', model: 'm', summary: undefined })
    },
    plan: () => Promise.reject(new Error('not planned')),
  }
  return { run: (_bytes: number, work: (lease: WorkerLease) => Promise<unknown>) => work(lease) } as RewriteWorkers
}

function requestOf(original: Buffer): HookRequest {
  const format = chatFormat('openai-responses')
  if (!format) throw new Error('no Responses format')
  const deps = { config: loadConfig({}) } as RewriteHookDeps
  return { deps, format, wire: 'openai-responses', original, incoming: {}, isRefit: false }
}

describe('handing a body to a rewrite worker', () => {
  const text = JSON.stringify({ model: 'gpt-4.1', input: 'x'.repeat(4096) })

  it('prevents a second copy of a body written in shared memory: the worker is handed the same memory', async () => {
    const shared = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(text)))
    shared.write(text)
    const handed: Omit<ReadJob, 'kind'>[] = []
    const result = await prepareInWorker(requestOf(shared), recordingPool(handed), () => Promise.reject(new Error()))
    expect(handed[0]?.body.buffer).toBe(shared.buffer)
    // Left alone, the body is the caller's own bytes, still whole.
    expect(result.kind === 'forward' && result.prepared.body).toBe(shared)
    expect(shared.toString('utf8')).toBe(text)
  })

  it('keeps any other body on this thread: the worker is handed a copy of its own', async () => {
    const own = Buffer.from(text)
    const handed: Omit<ReadJob, 'kind'>[] = []
    await prepareInWorker(requestOf(own), recordingPool(handed), () => Promise.reject(new Error()))
    expect(handed[0]?.body.buffer).not.toBe(own.buffer)
    expect(Buffer.from(handed[0]?.body ?? []).toString('utf8')).toBe(text)
    expect(own.toString('utf8')).toBe(text)
  })
})
