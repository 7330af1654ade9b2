import fc from 'fast-check'
import { request } from 'undici'
import { afterAll, describe, expect, it } from 'vitest'
import { Calibration } from '../../src/calibration/calibration.ts'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { RewriteWorkers, WorkerFailed } from '../../src/forward/rewrite-workers/pool.ts'
import { createLogger } from '../../src/log/logger.ts'
import type { PrepareResult } from '../../src/request/prepared.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { exactCounters } from '../../src/providers/registry.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { SessionStore } from '../../src/session/session-store.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import { anthropicBody, buildMessages, requestsOf, type Json } from '../helpers/conversations.ts'
import { requestsIn, stepsArbitrary, wireFixtures } from '../helpers/wire-formats.ts'
import { agentLoop } from '../helpers/hook-on-clock.ts'

/** Budget small enough that the generated conversations get cleared, folded and dropped. */
const models = [{ match: '*', window: 24_000, budget: 1, minCacheableTokens: 1024, thinkingBoundToPrefix: false }]
const settings = {
  threads: 1,
  maxQueuedBytes: 64 * 1024 * 1024,
  timeoutMs: 30_000,
  idleMs: 30_000,
  maxHeapBytes: 192 * 1024 * 1024,
}
const pools: RewriteWorkers[] = []

function poolFor(config: Config, overrides: Partial<typeof settings> = {}): RewriteWorkers {
  const pool = new RewriteWorkers(config, { ...settings, ...overrides })
  pools.push(pool)
  return pool
}

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()))
})

/** One hook, its store and calibration, on a fixed clock; in worker threads when given a pool. */
function hookOf(
  config: Config,
  workers?: RewriteWorkers,
  store: SessionStore = new MemorySessionStore(config.sessions),
  format: WireFormat = 'anthropic-messages',
) {
  const calibration = new Calibration()
  const warnings: string[] = []
  const logger = createLogger('silent')
  logger.warn = ((object: unknown, message?: string) => warnings.push(`${message} ${JSON.stringify(object)}`)) as never
  const clock = { now: 1_000_000 }
  // What the hook saved for each conversation, as it saved it.
  const saved = new Map<string, unknown>()
  const recording: SessionStore = {
    kind: store.kind,
    get: (key) => store.get(key),
    set: (key, state, before) => {
      saved.set(key, structuredClone(state))
      return store.set(key, state, before)
    },
    finishedLengths: (kind) => store.finishedLengths?.(kind) ?? Promise.resolve([]),
    size: () => store.size(),
    healthy: () => store.healthy(),
  }
  const hook = createRewriteHook({
    config,
    store: recording,
    calibration,
    // As the app makes it (app.ts), and as each worker makes its own: exact where the tokenizer is public.
    estimator: new TokenEstimator(exactCounters),
    logger,
    now: () => clock.now,
    ...(workers ? { workers } : {}),
  })(format)
  if (!hook) throw new Error(`no hook for ${format}`)
  return { hook, saved, calibration, clock, warnings }
}

/** The default test config and one pool for it, shared by the comparisons that need nothing else (a worker's start costs a second under tsx). */
const shared = { config: undefined as Config | undefined, workers: undefined as RewriteWorkers | undefined }
function sharedPool(): { config: Config; workers: RewriteWorkers } {
  shared.config ??= configOf()
  shared.workers ??= poolFor(shared.config)
  return { config: shared.config, workers: shared.workers }
}

function configOf(overrides: DeepPartial<Config> = {}): Config {
  return loadConfig({ overrides: { models, rewriteWorkers: { aboveBytes: 0 }, ...overrides } as DeepPartial<Config> })
}

/** What a result says, in full: the bytes and headers sent (or the refusal), the log line, the accounting. */
function factsOf(result: PrepareResult) {
  if (result.kind === 'reject')
    return {
      kind: result.kind,
      error: [result.error.code, result.error.message],
      log: result.log,
      accounting: result.accounting,
    }
  const { body, headers, log, accounting, hideUsageChunk, followUp } = result.prepared
  return {
    kind: result.kind,
    body: body.toString('utf8'),
    headers,
    log,
    accounting,
    hideUsageChunk,
    replannable: followUp?.replannable,
  }
}

/**
 * Sends the same conversation's requests to the main thread's hook and to the worker's: after each,
 * the same usage is reported to both (so the calibration factor moves), and every fact is compared.
 */
async function sameBothWays(
  requests: readonly Json[],
  workers: RewriteWorkers,
  config: Config,
  format: WireFormat = 'anthropic-messages',
): Promise<number> {
  const here = hookOf(config, undefined, undefined, format)
  const there = hookOf(config, workers, undefined, format)
  let edited = 0
  for (const [index, request] of requests.entries()) {
    here.clock.now = there.clock.now = 1_000_000 + index * 40_000
    const bytes = Buffer.from(JSON.stringify(request))
    const [mine, theirs] = [
      await here.hook(bytes, { 'x-ctxgate-session': 's' }),
      await there.hook(bytes, { 'x-ctxgate-session': 's' }),
    ]
    expect(factsOf(theirs)).toEqual(factsOf(mine))
    expect(there.saved).toEqual(here.saved)
    if (mine.kind === 'forward' && !mine.prepared.body.equals(bytes)) edited++
    if (mine.kind === 'forward' && theirs.kind === 'forward') {
      const report = mine.prepared.log?.['rewrite'] as { estimatedAfter?: number } | undefined
      const actual = Math.round((report?.estimatedAfter ?? 1_000) * (1.1 + (index % 3) * 0.1))
      const usage = {
        inputTokens: actual,
        cacheWrite5mTokens: 0,
        cacheWrite1hTokens: 0,
        cacheReadTokens: 0,
        outputTokens: 10,
      }
      await mine.prepared.followUp?.recordUsage(usage)
      await theirs.prepared.followUp?.recordUsage(usage)
    }
  }
  expect(there.warnings).toEqual([])
  return edited
}

describe('large bodies rewritten in a worker thread', () => {
  it('sends the same bytes, log, accounting and frozen decisions as the main thread, request after request', async () => {
    const { config, workers } = sharedPool()
    const messages = buildMessages(
      Array.from({ length: 11 }, (_, step) => ({
        kind: step % 5 === 4 ? ('turn' as const) : ('round' as const),
        calls: 1 + (step % 3),
        sizes: [1_500 + step * 400, 9_000, 300],
        outputKind: (['prose', 'json', 'hex', 'log'] as const)[step % 4] ?? 'prose',
        thinking: step % 2 === 0,
        extraField: step % 3 === 0,
      })),
    )
    const edited = await sameBothWays(
      requestsOf(messages).map((request) => anthropicBody(request, { x_number: 1.0e5 })),
      workers,
      config,
    )
    // The budget forced edits on some requests: the comparison covered rewritten bodies, not only pass-throughs.
    expect(edited).toBeGreaterThan(3)
  })

  it('sends the same bytes over generated conversations in every wire format (property)', async () => {
    const { config, workers } = sharedPool()
    for (const fixture of wireFixtures)
      await fc.assert(
        fc.asyncProperty(stepsArbitrary(3, 9), async (steps) => {
          const requests = requestsIn(fixture, fixture.conversation(steps)).map((list) => fixture.body(list))
          await sameBothWays(requests, workers, config, fixture.format)
        }),
        { numRuns: 2, seed: 25 },
      )
  })

  it('re-plans a refused request (a refit) to the same bytes as the main thread', async () => {
    const config = configOf({ models: [{ ...models[0], window: 200_000 }] } as DeepPartial<Config>)
    const here = hookOf(config)
    const there = hookOf(config, poolFor(config))
    const body = Buffer.from(JSON.stringify(agentLoop(30, 'Refit me.')))
    const [mine, theirs] = [await here.hook(body, {}), await there.hook(body, {})]
    expect(factsOf(theirs)).toEqual(factsOf(mine))
    if (mine.kind !== 'forward' || theirs.kind !== 'forward') throw new Error('expected forwards')
    const refusal = { actualTokens: 90_000, limit: 60_000 }
    const [refit, refitThere] = [
      await mine.prepared.followUp?.replan(refusal),
      await theirs.prepared.followUp?.replan(refusal),
    ]
    expect(refit).toBeDefined()
    expect(refit!.body.length).toBeLessThan(body.length)
    expect(refitThere?.body.toString('utf8')).toBe(refit!.body.toString('utf8'))
    expect(refitThere?.log).toEqual(refit!.log)
  })

  it('re-plans a body written in shared memory (a socket conversation) to the same bytes as the main thread, and leaves its memory as it was', async () => {
    const config = configOf({ models: [{ ...models[0], window: 200_000 }] } as DeepPartial<Config>)
    const here = hookOf(config)
    const there = hookOf(config, poolFor(config))
    const body = Buffer.from(JSON.stringify(agentLoop(30, 'Share me.')))
    const shared = Buffer.from(new SharedArrayBuffer(body.length))
    body.copy(shared)
    const [mine, theirs] = [await here.hook(body, {}), await there.hook(shared, {})]
    expect(factsOf(theirs)).toEqual(factsOf(mine))
    if (mine.kind !== 'forward' || theirs.kind !== 'forward') throw new Error('expected forwards')
    const refusal = { actualTokens: 90_000, limit: 60_000 }
    const [refit, refitThere] = [
      await mine.prepared.followUp?.replan(refusal),
      await theirs.prepared.followUp?.replan(refusal),
    ]
    expect(refit!.body.length).toBeLessThan(body.length)
    expect(refitThere?.body.toString('utf8')).toBe(refit!.body.toString('utf8'))
    expect(shared.equals(body)).toBe(true)
  })

  it('prevents a stuck rewrite from holding a request: past the timeout the worker is ended, the body goes on as sent, and the next request is rewritten', async () => {
    const config = configOf()
    const memory = new MemorySessionStore(config.sessions)
    let slow = true
    const store: SessionStore = {
      kind: memory.kind,
      get: async (key) => {
        if (slow) await new Promise((resolve) => setTimeout(resolve, 400))
        return memory.get(key)
      },
      set: (key, state) => memory.set(key, state),
      size: () => memory.size(),
      healthy: () => true,
    }
    const there = hookOf(config, poolFor(config, { timeoutMs: 150 }), store)
    const body = Buffer.from(JSON.stringify(agentLoop(4, 'Time out.')))
    // Thrown: the proxy's fail-open (prepare-request.ts) then sends the client's own bytes.
    await expect(there.hook(body, {})).rejects.toThrow(WorkerFailed)
    expect(there.warnings.join('\n')).toMatch(
      /rewrite worker failed; the request goes on as the client sent it.*timed out after 150 ms/,
    )
    slow = false
    const next = await there.hook(body, {})
    expect(next.kind).toBe('forward')
  })

  it('prevents a worker from growing past rewriteWorkers.maxHeapBytes: V8 ends it, the body goes on as sent, and a new worker rewrites the next', async () => {
    const config = configOf()
    const workers = poolFor(config, { maxHeapBytes: 48 * 1024 * 1024 })
    const there = hookOf(config, workers)
    // About 12 MB of tool results: its parse tree alone is larger than the worker's 48 MiB heap.
    const large = Buffer.from(JSON.stringify(agentLoop(6_000, 'Too large for the heap.')))
    expect(large.length).toBeGreaterThan(10_000_000)
    await expect(there.hook(large, {})).rejects.toThrow(WorkerFailed)
    expect(there.warnings.join('\n')).toMatch(
      /rewrite worker failed; the request goes on as the client sent it.*reaching memory limit/,
    )
    expect(workers.failed).toBe(1)
    const small = Buffer.from(JSON.stringify(agentLoop(40, 'Fits.')))
    const next = await there.hook(small, {})
    expect(next.kind === 'forward' && !next.prepared.body.equals(small)).toBe(true)
    expect(workers.threads).toBe(1)
  })

  it('prevents unbounded memory: past rewriteWorkers.maxQueuedBytes a body gets a 503 in the provider’s shape', async () => {
    const config = configOf()
    const there = hookOf(config, poolFor(config, { maxQueuedBytes: 1_048_576 }))
    const body = Buffer.from(JSON.stringify(agentLoop(80, 'Queue me.')))
    expect(body.length).toBeGreaterThan(600_000)
    const results = await Promise.all([there.hook(body, {}), there.hook(body, {})])
    expect(results.map((result) => result.kind).sort()).toEqual(['forward', 'reject'])
    const refused = results.find((result) => result.kind === 'reject')
    expect(refused?.kind === 'reject' && refused.error.code).toBe('CTXGATE_OVERLOADED')
    expect(refused?.kind === 'reject' && refused.error.status).toBe(503)
    // Once the first is done, the queue has room again.
    expect((await there.hook(body, {})).kind).toBe('forward')
  })
})

describe('the rewrite workers through the proxy', () => {
  it('sends the upstream the same bytes from the Anthropic SDK with workers as without, and says so in metrics', async () => {
    const { default: Anthropic } = await import('@anthropic-ai/sdk')
    const { startStack } = await import('../helpers/stack.ts')
    const small = { models, rewriteWorkers: { aboveBytes: 100_000 } }
    const stacks = [
      await startStack({ config: { ...small, rewriteWorkers: { threads: 0 } } as DeepPartial<Config> }),
      await startStack({ config: small as DeepPartial<Config> }),
    ]
    try {
      const seen: string[] = []
      for (const stack of stacks) {
        const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-test-key-0001', maxRetries: 0 })
        const body = agentLoop(40, 'Rewrite me in a worker.') as unknown as Parameters<typeof client.messages.create>[0]
        await client.messages.create({ ...body, model: 'claude-sonnet-5', stream: false })
        seen.push(stack.mock.requests.at(-1)?.body ?? '')
      }
      expect(seen[0]?.length).toBeGreaterThan(0)
      expect(seen[1]).toBe(seen[0])
      // The budget forced edits: what went upstream is not what the client sent.
      expect(seen[0]).not.toBe(JSON.stringify(agentLoop(40, 'Rewrite me in a worker.')))
      const metrics = await (await request(`${stacks[1]?.proxyUrl}/metrics`)).body.text()
      expect(metrics).toMatch(/^ctxgate_rewrite_workers_threads 1$/m)
      expect(metrics).toMatch(/^ctxgate_rewrite_workers_queued_bytes 0$/m)
    } finally {
      await Promise.all(stacks.map((stack) => stack.close()))
    }
  })

  it('ends a worker that has been idle for rewriteWorkers.idleMs, and starts one for the next large body', async () => {
    const config = configOf()
    const workers = poolFor(config, { idleMs: 100 })
    const there = hookOf(config, workers)
    const body = Buffer.from(JSON.stringify(agentLoop(4, 'Idle.')))
    expect((await there.hook(body, {})).kind).toBe('forward')
    expect(workers.threads).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(workers.threads).toBe(0)
    expect((await there.hook(body, {})).kind).toBe('forward')
    expect(workers.threads).toBe(1)
  })
})
