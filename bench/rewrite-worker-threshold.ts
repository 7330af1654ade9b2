/**
 * Where should a body start going to a rewrite worker (`rewriteWorkers.aboveBytes`)? For bodies of
 * several sizes (Anthropic tool loops of 2,000-character results), the hook is run in one process
 * on the main thread and through a one-thread pool, interleaved, after a warm-up: its time per
 * request, how long the main thread's event loop was busy meanwhile (event-loop utilization), and
 * the longest stall a 1 ms timer saw. A worker saves the main thread's time and adds a copy and two
 * messages to the request's own.
 * Usage: tsx bench/rewrite-worker-threshold.ts [repeats=6] [sizes in rounds, comma-separated=150,450,900,1800,3600]
 */
import { loadavg } from 'node:os'
import { Calibration } from '../src/calibration/calibration.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { createRewriteHook } from '../src/forward/rewrite-hook/hook.ts'
import { RewriteWorkers } from '../src/forward/rewrite-workers/pool.ts'
import { createLogger } from '../src/log/logger.ts'
import { exactCounters } from '../src/providers/registry.ts'
import { TokenEstimator } from '../src/rewrite/estimate.ts'
import { MemorySessionStore } from '../src/session/memory-store.ts'
import { percentile } from './peers.ts'

const repeats = Number(process.argv[2] ?? 6)
const sizes = (process.argv[3] ?? '150,450,900,1800,3600').split(',').map(Number)
const config = loadConfig({ overrides: { rewriteWorkers: { aboveBytes: 0 } } })
// Kept alive between requests (the interleaved main-thread runs can outlast the idle end): warm workers are measured.
const workers = new RewriteWorkers(config, { ...config.rewriteWorkers, threads: 1, idleMs: 600_000 })

function body(rounds: number): Buffer {
  const messages: unknown[] = [{ role: 'user', content: 'Port the scheduler to the new queue API.' }]
  for (let round = 0; round < rounds; round++) {
    const id = `toolu_${round}`
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input: { round } }] })
    const content = `export function step${round}(job: Job) { return queue.push(job, ${round}) }\n`.repeat(34)
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: content.slice(0, 2_000) }],
    })
  }
  return Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, messages }))
}

function hookOf(inWorker: boolean) {
  const hook = createRewriteHook({
    config,
    store: new MemorySessionStore(config.sessions),
    calibration: new Calibration(),
    estimator: new TokenEstimator(exactCounters),
    logger: createLogger('silent'),
    ...(inWorker ? { workers } : {}),
  })('anthropic-messages')
  if (!hook) throw new Error('no hook')
  return hook
}

/** One request: its time, the main thread's busy time, and the longest gap a 1 ms timer saw. */
async function timed(hook: ReturnType<typeof hookOf>, bytes: Buffer) {
  let longest = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 1)
  const before = performance.eventLoopUtilization()
  const started = performance.now()
  await hook(bytes, { 'x-ctxgate-session': `s${Math.random()}` })
  const ms = performance.now() - started
  const busy = performance.eventLoopUtilization(before).active
  clearInterval(timer)
  return { ms, busy, longest: Math.max(longest, performance.now() - last) }
}

console.log(`| body | where | requests | time p50 (ms) | main thread busy p50 (ms) | longest stall p50 | max |`)
console.log(`|---:|---|---:|---:|---:|---:|---:|`)
for (const rounds of sizes) {
  const bytes = body(rounds)
  const hooks = { 'main thread': hookOf(false), worker: hookOf(true) }
  const seen: Record<string, { ms: number; busy: number; longest: number }[]> = { 'main thread': [], worker: [] }
  for (let index = 0; index < repeats + 2; index++)
    for (const [where, hook] of Object.entries(hooks)) {
      const result = await timed(hook, bytes)
      // The first two of each are warm-up (JIT, the worker's start).
      if (index >= 2) seen[where]?.push(result)
    }
  for (const [where, results] of Object.entries(seen)) {
    const of = (key: 'ms' | 'busy' | 'longest') => results.map((result) => result[key])
    console.log(
      `| ${(bytes.length / 1e6).toFixed(2)} MB | ${where} | ${results.length} | ${percentile(of('ms'), 50).toFixed(1)} | ${percentile(of('busy'), 50).toFixed(1)} | ${percentile(of('longest'), 50).toFixed(1)} | ${Math.max(...of('longest')).toFixed(1)} |`,
    )
  }
}
console.log(
  `\nload average at the end: ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`,
)
await workers.close()
