/**
 * Soak: N concurrent streaming clients for a while, with faults injected upstream, through ctxgate on
 * loopback. Every request must end either complete or with a clear error (a provider-shaped error
 * body, or an error event in the stream); RSS and open handles must come back afterwards.
 * Then bounded fuzzing (bench/fuzz.ts, its own ctxgate process): 0 ctxgate 5xx, 0 crashes, 0 pairing breaks.
 * Usage: tsx bench/soak.ts [seconds=20] [concurrency=200] [fuzzHttpBodies=600] [fuzzSockets=60] (0 bodies skips the fuzz)
 */
import { spawnSync } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { Registry } from 'prom-client'
import { Agent, request } from 'undici'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { createLogger } from '../src/log/logger.ts'
import { startMockServer } from '../src/mock/server.ts'

const seconds = Number(process.argv[2] ?? 20)
const concurrency = Number(process.argv[3] ?? 200)
const faults = [
  '{"kind":"reset-mid-stream","afterFrames":3}',
  '{"kind":"error-mid-stream","afterFrames":3}',
  '{"kind":"status","status":529}',
  '{"kind":"reset"}',
  '{"kind":"status","status":500}',
  'hang',
]

const mock = await startMockServer({ logLimit: 1 })
const config = loadConfig({
  overrides: {
    server: { port: 0 },
    log: { level: 'silent' },
    upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } },
    upstream: { headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000, keepAliveTimeoutMs: 1_000 },
    retry: { baseDelayMs: 50, maxDelayMs: 200 },
  },
})
const app = await buildApp({ config, logger: createLogger('silent'), registry: new Registry() })
await app.server.listen({ host: '127.0.0.1', port: 0 })
const url = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}/v1/messages`
const client = new Agent({ connections: concurrency, keepAliveTimeout: 1_000 })

const handles = () => process.getActiveResourcesInfo().length
global.gc?.()
const before = { rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed, handles: handles() }
const tally = { complete: 0, errorStatus: 0, errorEvent: 0, clientError: 0, unaccounted: 0 }
let sequence = 0
const deadline = Date.now() + seconds * 1000

async function worker(): Promise<void> {
  while (Date.now() < deadline) {
    const index = sequence++
    const fault = index % 10 === 0 ? faults[(index / 10) % faults.length] : undefined
    try {
      const answer = await request(url, {
        method: 'POST',
        dispatcher: client,
        headers: {
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'x-mock-chunk-delay-ms': '5',
          ...(fault ? { 'x-mock-fault': fault } : {}),
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          stream: true,
          messages: [{ role: 'user', content: `soak ${index}` }],
        }),
      })
      const text = await answer.body.text()
      if (answer.statusCode !== 200) tally[/"type":"error"/.test(text) ? 'errorStatus' : 'unaccounted']++
      else if (text.includes('event: message_stop')) tally.complete++
      else if (text.includes('event: error')) tally.errorEvent++
      else tally.unaccounted++
    } catch {
      tally.clientError++
    }
  }
}

const started = performance.now()
await Promise.all(Array.from({ length: concurrency }, worker))
const elapsed = (performance.now() - started) / 1000
await client.close()
await new Promise((resolve) => setTimeout(resolve, 1_500))
global.gc?.()
const after = { rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed, handles: handles() }
const total = Object.values(tally).reduce((sum, value) => sum + value, 0)

console.log(`\nSoak: ${concurrency} concurrent streams for ${elapsed.toFixed(0)} s, 1 in 10 with an upstream fault`)
console.log(
  [
    'requests',
    'complete',
    'error status (provider shape)',
    'error event in stream',
    'client-side error',
    'unaccounted',
    'heap after GC (MB)',
    'RSS (MB)',
    'handles',
  ].join(' | '),
)
console.log(
  [
    total,
    tally.complete,
    tally.errorStatus,
    tally.errorEvent,
    tally.clientError,
    tally.unaccounted,
    `${(before.heap / 1e6).toFixed(0)} → ${(after.heap / 1e6).toFixed(0)}`,
    `${(before.rss / 1e6).toFixed(0)} → ${(after.rss / 1e6).toFixed(0)}`,
    `${before.handles} → ${after.handles}`,
  ].join(' | '),
)
console.log(
  `Every request of a soak is its own conversation, so the bounded session caches fill up to sessions.maxEntries (${config.sessions.maxEntries}) by design; heap stays flat once they are full.`,
)
await app.server.close()
await mock.close()
if (tally.unaccounted > 0) process.exitCode = 1

const fuzzBodies = process.argv[4] ?? '600'
if (fuzzBodies !== '0') {
  console.log(`\nFuzz (bench/fuzz.ts ${fuzzBodies} bodies, ${process.argv[5] ?? '60'} WebSocket sessions):`)
  const fuzz = spawnSync(process.execPath, ['--import', 'tsx', 'bench/fuzz.ts', fuzzBodies, process.argv[5] ?? '60'], {
    stdio: 'inherit',
    cwd: new URL('..', import.meta.url),
  })
  if (fuzz.status !== 0) process.exitCode = 1
}
