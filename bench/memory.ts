/**
 * ctxgate's memory, measured on its own process: RSS with 1,000 concurrent slow streams open, and
 * RSS over many requests (drift). Usage: tsx bench/memory.ts [streams=1000] [requests=50000]
 */
import { readFileSync } from 'node:fs'
import { Agent, request } from 'undici'
import { startCtxgate, startMockProcess } from './peers.ts'

const streams = Number(process.argv[2] ?? 1_000)
const requests = Number(process.argv[3] ?? 50_000)

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

const mock = await startMockProcess()
const ctxgate = await startCtxgate(mock.url, true)
const agent = new Agent({ connections: streams + 10, keepAliveTimeout: 5_000, pipelining: 0 })
const body = (index: number, stream: boolean) =>
  JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    stream,
    messages: [{ role: 'user', content: `request ${index % 500}` }],
  })
const send = async (index: number, stream: boolean, headers: Record<string, string> = {}): Promise<void> => {
  const answer = await request(`${ctxgate.url}/v1/messages`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: body(index, stream),
  })
  await answer.body.text()
}

// Warm up, then the baseline.
for (let index = 0; index < 200; index++) await send(index, false)
const idle = rssMb(ctxgate.pid)

// 1,000 streams open at once: 20 events, 150 ms apart (~3 s each).
let peak = 0
const sampler = setInterval(() => (peak = Math.max(peak, rssMb(ctxgate.pid))), 100)
const started = performance.now()
await Promise.all(Array.from({ length: streams }, (_, index) => send(index, true, { 'x-mock-chunk-delay-ms': '150' })))
clearInterval(sampler)
const streamSeconds = (performance.now() - started) / 1000

// Drift: many requests, 32 at a time, RSS sampled along the way.
const samples: string[] = []
let next = 0
const every = Math.max(1, Math.floor(requests / 5))
async function worker(): Promise<void> {
  while (next < requests) {
    const index = next++
    await send(index, index % 2 === 0)
    if (index > 0 && index % every === 0)
      samples.push(`${index.toLocaleString('en-US')}: ${rssMb(ctxgate.pid).toFixed(0)}`)
  }
}
await Promise.all(Array.from({ length: 32 }, worker))
const end = rssMb(ctxgate.pid)

console.log('\n## Memory of the ctxgate process (MB RSS)\n')
console.log('| measurement | value |')
console.log('|---|---:|')
console.log(`| idle, after warm-up | ${idle.toFixed(0)} |`)
console.log(
  `| peak with ${streams.toLocaleString('en-US')} concurrent slow streams (${streamSeconds.toFixed(1)} s) | ${peak.toFixed(0)} |`,
)
console.log(
  `| over ${requests.toLocaleString('en-US')} requests (32 at a time), sampled | ${samples.join(' → ')} → end ${end.toFixed(0)} |`,
)
await agent.close()
await ctxgate.stop()
await mock.stop()
