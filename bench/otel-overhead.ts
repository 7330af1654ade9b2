/**
 * What OpenTelemetry export costs a request, side by side in one run against the same fake upstream:
 *   1. added latency: ctxgate with export off and with export on to a local OTLP/HTTP receiver, at 64
 *      concurrent streams (the fake upstream spaces its events `--chunk-delay-ms` apart, as a model
 *      does), in interleaved rounds — p50 and p99 of time to first byte and of the whole answer, and
 *      ctxgate's CPU time per request;
 *   2. a collector that is down: ctxgate exporting to a closed port for the whole `--seconds`, at 64
 *      concurrent streams — requests that failed or came back different, latency beside export off,
 *      and the process's resident memory before and after (the span queue is bounded).
 * Usage: tsx bench/otel-overhead.ts [--seconds 10] [--rounds 6] [--chunk-delay-ms 10]   (--seconds 60: the full minute)
 * --chunk-delay-ms 0 answers as fast as the mock can, which saturates the CPU: then every µs of
 * work per request shows up as latency for all 64 streams.
 * Timings move with whatever else the machine runs: read the columns against each other, not alone.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { cpuTimeMs, freePort, percentile, startCtxgate, startMockProcess, type Target } from './peers.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '6' },
    'chunk-delay-ms': { type: 'string', default: '10' },
  },
})
const downSeconds = Number(values.seconds)
const rounds = Number(values.rounds)
const chunkDelayMs = Number(values['chunk-delay-ms'])
const concurrency = 64
/** Each round runs every target this long. */
const roundSeconds = 2

/** A local collector that reads and acknowledges every export, counting what it got. */
async function startReceiver(): Promise<{
  url: string
  exports: () => number
  bytes: () => number
  close: () => Promise<void>
}> {
  let exports = 0
  let bytes = 0
  const server: Server = createServer((incoming, response) => {
    incoming.on('data', (chunk: Buffer) => (bytes += chunk.length))
    incoming.on('end', () => {
      exports++
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    bytes: () => bytes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

const body = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  stream: true,
  messages: [{ role: 'user', content: 'x'.repeat(2_000) }],
})
const headers = {
  'content-type': 'application/json',
  'x-api-key': 'sk-ant-bench-0001',
  'anthropic-version': '2023-06-01',
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  'x-mock-chunk-delay-ms': String(chunkDelayMs),
}

interface LoadSample {
  readonly latencies: number[]
  /** Time to the answer's first body chunk. */
  readonly firstBytes: number[]
  failed: number
  readonly answers: Set<string>
  /** ctxgate's CPU time spent on this sample's requests. */
  cpuMs: number
}

const newSample = (): LoadSample => ({ latencies: [], firstBytes: [], failed: 0, answers: new Set(), cpuMs: 0 })

/** `concurrency` streams, each sending the next request as soon as its answer has ended, for `seconds`. */
async function load(target: Target, agent: Agent, seconds: number, sample: LoadSample): Promise<void> {
  const until = performance.now() + seconds * 1000
  const cpuBefore = cpuTimeMs(target.pid ?? 0) ?? 0
  const stream = async (): Promise<void> => {
    while (performance.now() < until) {
      const started = performance.now()
      try {
        const answer = await request(`${target.url}/v1/messages`, { method: 'POST', headers, body, dispatcher: agent })
        let text = ''
        for await (const chunk of answer.body) {
          if (text === '') sample.firstBytes.push(performance.now() - started)
          text += (chunk as Buffer).toString('utf8')
        }
        sample.latencies.push(performance.now() - started)
        // The events minus ids and the mock's reply number: the same for every call when nothing in between changed them.
        if (answer.statusCode !== 200 || !text.includes('event: message_stop')) sample.failed++
        else
          sample.answers.add(
            text
              .replace(/"id":"[^"]*"/g, '')
              .replace(/msg_[A-Za-z0-9_]+/g, '')
              .replace(/reply \d+/g, 'reply')
              // The mock numbers its replies; the number can arrive in a text delta of its own.
              .replace(/"text":"\d+ "/g, '"text":"N "'),
          )
      } catch {
        sample.failed++
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, stream))
  sample.cpuMs += (cpuTimeMs(target.pid ?? 0) ?? 0) - cpuBefore
}

const cpuPerRequest = (sample: LoadSample): string =>
  fmt((sample.cpuMs * 1000) / Math.max(1, sample.latencies.length), 0)

function residentMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'))
  return Number(line?.split(/\s+/)[1] ?? Number.NaN) / 1024
}

const fmt = (value: number, digits = 2): string => value.toFixed(digits)

const mock = await startMockProcess()
const receiver = await startReceiver()
const deadPort = await freePort()
const exportEnv = (endpoint: string): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_SERVICE_NAME: 'ctxgate-bench',
  // Metrics every 5 s instead of 60 so a short run exports some too.
  OTEL_METRIC_EXPORT_INTERVAL: '5000',
})
const off = await startCtxgate(mock.url, true, { label: 'export off' })
const on = await startCtxgate(mock.url, true, { label: 'export on', env: exportEnv(receiver.url) })
const down = await startCtxgate(mock.url, true, {
  label: 'collector down',
  env: exportEnv(`http://127.0.0.1:${deadPort}`),
})
const agents = new Map([off, on, down].map((target) => [target.name, new Agent({ connections: concurrency })]))
const agentOf = (target: Target): Agent => agents.get(target.name) as Agent

try {
  console.log(
    `OpenTelemetry export overhead: ${concurrency} concurrent streamed Anthropic requests (2 KB), rewrite on, upstream events ${chunkDelayMs} ms apart`,
  )
  console.log(`node ${process.version}; ${rounds} interleaved rounds of ${roundSeconds} s per target\n`)
  // Warm-up: connections, JIT, the exporter's first connection.
  for (const target of [off, on, down]) await load(target, agentOf(target), 1, newSample())

  const samples = new Map([off, on].map((target) => [target.name, newSample()]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [off, on] : [on, off]
    for (const target of order)
      await load(target, agentOf(target), roundSeconds, samples.get(target.name) as LoadSample)
  }
  const offSample = samples.get(off.name) as LoadSample
  const onSample = samples.get(on.name) as LoadSample
  console.log(
    '| ctxgate | requests | failed | first byte p50 ms | first byte p99 ms | answer p50 ms | answer p99 ms | ctxgate CPU µs/request |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [name, sample] of samples)
    console.log(
      `| ${name} | ${sample.latencies.length} | ${sample.failed} | ${fmt(percentile(sample.firstBytes, 50))} | ${fmt(percentile(sample.firstBytes, 99))} | ${fmt(percentile(sample.latencies, 50))} | ${fmt(percentile(sample.latencies, 99))} | ${cpuPerRequest(sample)} |`,
    )
  const added = (pick: (sample: LoadSample) => number[], p: number): string =>
    fmt(percentile(pick(onSample), p) - percentile(pick(offSample), p), 3)
  console.log(
    `\nadded with export on, p50: first byte ${added((sample) => sample.firstBytes, 50)} ms, answer ${added((sample) => sample.latencies, 50)} ms (target: within 0.1 ms)`,
  )
  console.log(
    `added with export on, p99: first byte ${added((sample) => sample.firstBytes, 99)} ms, answer ${added((sample) => sample.latencies, 99)} ms`,
  )
  console.log(`the receiver got ${receiver.exports()} exports, ${fmt(receiver.bytes() / 1024, 0)} KB`)

  // The collector is down for the whole window; export off runs right after for the same time.
  const rssBefore = residentMb(down.pid ?? 0)
  const rssSeen: number[] = []
  const watch = setInterval(() => rssSeen.push(residentMb(down.pid ?? 0)), 1000)
  const downSample: LoadSample = newSample()
  await load(down, agentOf(down), downSeconds, downSample)
  clearInterval(watch)
  const rssAfter = residentMb(down.pid ?? 0)
  const rssHalf = rssSeen[Math.floor(rssSeen.length / 2)] ?? rssAfter
  const offAgain: LoadSample = newSample()
  await load(off, agentOf(off), downSeconds, offAgain)
  const different = [...downSample.answers].filter((answer) => !offAgain.answers.has(answer)).length
  console.log(`\ncollector down for ${downSeconds} s (export to a closed port), then export off for ${downSeconds} s:`)
  console.log(
    '| ctxgate | requests | failed | answers unlike export off | answer p50 ms | answer p99 ms | RSS before → halfway → end (peak) |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |')
  console.log(
    `| collector down | ${downSample.latencies.length} | ${downSample.failed} | ${different} | ${fmt(percentile(downSample.latencies, 50))} | ${fmt(percentile(downSample.latencies, 99))} | ${fmt(rssBefore, 0)} → ${fmt(rssHalf, 0)} → ${fmt(rssAfter, 0)} MB (${fmt(Math.max(rssAfter, ...rssSeen), 0)}) |`,
  )
  console.log(
    `| export off | ${offAgain.latencies.length} | ${offAgain.failed} | – | ${fmt(percentile(offAgain.latencies, 50))} | ${fmt(percentile(offAgain.latencies, 99))} | – |`,
  )
  console.log(`requests affected while the collector was down: ${downSample.failed + different}`)
  if (different > 0 && process.env['BENCH_DEBUG']) {
    const [a = '', b = ''] = [[...downSample.answers][0], [...offAgain.answers][0]]
    let at = 0
    while (at < a.length && a[at] === b[at]) at++
    console.log(
      'first difference:',
      JSON.stringify(a.slice(at - 80, at + 80)),
      'vs',
      JSON.stringify(b.slice(at - 80, at + 80)),
    )
  }
} finally {
  for (const agent of agents.values()) await agent.close()
  await Promise.all([off.stop(), on.stop(), down.stop(), mock.stop()])
  await receiver.close()
}
