/**
 * Does a large request hold up everyone else's streams? A stream through ctxgate (OpenAI Chat,
 * events 20 ms apart, from its own fake upstream process) is timed chunk by chunk, first alone,
 * then while another client sends ~1 MB, 200-round Anthropic conversations back to back (to a
 * second fake upstream) with rewriting on. The rise in the stream's gaps is how long ctxgate's
 * single thread was busy with the large bodies (parse, plan, serialize), not the upstream's.
 * While the large bodies go, /healthz is asked every 10 ms and its answer times reported too.
 * Two ctxgates in one run, one after the other: large bodies rewritten on the main thread
 * (`rewriteWorkers.threads: 0`, the baseline) and in the worker pool (the defaults).
 * Usage: tsx bench/event-loop-stall.ts [streams=15] [rounds=200] [senders=1] [result-chars=5000]
 * (the case: `15 12000 2 2000`, two clients sending 25 MB, 12,000-result bodies back to back)
 */
import { loadavg } from 'node:os'
import { Agent, request } from 'undici'
import { percentile, startCtxgate, startMockProcess } from './peers.ts'

const streams = Number(process.argv[2] ?? 15)
const rounds = Number(process.argv[3] ?? 200)
const senders = Number(process.argv[4] ?? 1)
const resultChars = Number(process.argv[5] ?? 5_000)
const mock = await startMockProcess()
const streamUpstream = await startMockProcess()
const agent = new Agent({ connections: 8 })
const headers = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'bench' }
/** The same load on two ctxgates in one run: large bodies on the main thread, and in the worker pool (the default). */
const conditions = [
  ...(process.env.BENCH_ONLY_POOL
    ? []
    : [{ label: 'main thread (rewriteWorkers.threads: 0)', yaml: 'rewriteWorkers:\n  threads: 0\n' }]),
  { label: 'worker pool (defaults)', yaml: '' },
]

function largeBody(): string {
  const messages: unknown[] = [{ role: 'user', content: 'Port the scheduler to the new queue API.' }]
  for (let round = 0; round < rounds; round++) {
    const id = `toolu_${round}`
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `src/queue/f${round}.ts` } }],
    })
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: id,
          content: `export function step${round}(job: Job) { return queue.push(job, ${round}) }\n`
            .repeat(Math.ceil(resultChars / 60))
            .slice(0, resultChars),
        },
      ],
    })
  }
  return JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, metadata: { user_id: 'bench-large' }, messages })
}

async function streamGaps(url: string): Promise<number[]> {
  const gaps: number[] = []
  for (let index = 0; index < streams; index++) {
    const answer = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench', 'x-mock-chunk-delay-ms': '20' },
      body: JSON.stringify({
        model: 'gpt-4.1',
        max_tokens: 64,
        stream: true,
        user: `stream-${index}`,
        messages: [{ role: 'user', content: 'Say something.' }],
      }),
    })
    let last = 0
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue
      const now = performance.now()
      if (last > 0) gaps.push(now - last)
      last = now
    }
  }
  return gaps
}

interface Measured {
  readonly quiet: number[]
  readonly loaded: number[]
  readonly health: number[]
  readonly largeSent: number
  readonly largeMs: number
  readonly statuses: Map<number, number>
}

/** Stream gaps alone, then beside the large senders, with /healthz asked every 10 ms meanwhile. */
async function measure(url: string, body: string): Promise<Measured> {
  const quiet = await streamGaps(url)
  let largeSent = 0
  let largeMs = 0
  const statuses = new Map<number, number>()
  const loading = { on: true }
  const sender = async (): Promise<void> => {
    while (loading.on) {
      const started = performance.now()
      const answer = await request(`${url}/v1/messages`, { method: 'POST', dispatcher: agent, headers, body })
      await answer.body.arrayBuffer()
      statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1)
      largeMs += performance.now() - started
      largeSent++
    }
  }
  const health: number[] = []
  const probing = (async () => {
    while (loading.on) {
      const started = performance.now()
      const answer = await request(`${url}/healthz`, { dispatcher: agent })
      await answer.body.dump()
      health.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  const load = Promise.all(Array.from({ length: senders }, sender))
  // The large bodies start first, so the timed streams run beside them.
  await new Promise((resolve) => setTimeout(resolve, 200))
  const loaded = await streamGaps(url)
  loading.on = false
  await load
  await probing
  return { quiet, loaded, health, largeSent, largeMs, statuses }
}

const body = largeBody()
const results: { label: string; measured: Measured }[] = []
for (const condition of conditions) {
  const ctxgate = await startCtxgate(mock.url, true, {
    openaiUpstream: streamUpstream.url,
    configYaml: condition.yaml,
    ...(process.env.BENCH_CLI ? { other: { cli: process.env.BENCH_CLI, label: '' } } : {}),
  })
  results.push({ label: condition.label, measured: await measure(ctxgate.url, body) })
  await ctxgate.stop()
}

const ms = (value: number): string => value.toFixed(1)
const mb = (body.length / 1e6).toFixed(1)
console.log(
  `\n## Stream chunk gaps and /healthz through ctxgate, alone and beside ${senders} client(s) sending ${mb} MB rewrites back to back (ms; upstream sends every 20 ms)\n`,
)
console.log(
  '| condition | gaps alone p50 / p99 | gaps beside p50 | p99 | max | /healthz asked | p50 | p99 | max | large sent | ms per round trip | statuses |',
)
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|')
for (const { label, measured } of results) {
  const { quiet, loaded, health } = measured
  const statuses = [...measured.statuses].map(([status, count]) => `${status} × ${count}`).join(', ')
  console.log(
    `| ${label} | ${ms(percentile(quiet, 50))} / ${ms(percentile(quiet, 99))} | ${ms(percentile(loaded, 50))} | ${ms(percentile(loaded, 99))} | ${ms(Math.max(...loaded))} | ${health.length} | ${ms(percentile(health, 50))} | ${ms(percentile(health, 99))} | ${ms(Math.max(...health))} | ${measured.largeSent} | ${ms(measured.largeMs / Math.max(1, measured.largeSent))} | ${statuses} |`,
  )
}
console.log(
  `\nload average at the end: ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`,
)
await agent.close()
await mock.stop()
await streamUpstream.stop()
