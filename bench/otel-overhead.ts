/**
 * What OpenTelemetry export costs a request, side by side in one run against the same fake upstream:
 *   1. added latency: ctxgate with export off and with export on to a local OTLP/HTTP receiver, at 64
 *      concurrent streams (the fake upstream spaces its events `--chunk-delay-ms` apart, as a model
 *      does), in many short interleaved rounds (off/on, then on/off). Each round's p50 with export on
 *      minus the same round's p50 with export off is one paired difference; the headline is their
 *      mean with a bootstrap 95% interval over rounds, so a machine whose load drifts between rounds
 *      moves both arms alike. Beside it, ctxgate's CPU per request: the main thread (where requests
 *      run) and the whole process (with the export worker);
 *   2. a collector that is down: ctxgate exporting to a closed port for the whole `--seconds`, at 64
 *      concurrent streams — requests that failed or came back different, latency beside export off,
 *      and the process's resident memory before and after (the span queue is bounded).
 * Usage: tsx bench/otel-overhead.ts [--seconds 10 (0: no collector-down run)] [--rounds 10] [--round-seconds 1] [--chunk-delay-ms 10] [--together]
 *   --together runs off and on in the same moments each round (64 streams each) rather than one
 *   after the other, so load from other work on the machine lands on both arms alike.
 *   --idle-worker makes export on hand every call to the worker, which samples it out and records no
 *   metrics: the cost of the hand-off alone, without the worker's own work.
 *   (the figure in BENCHMARKS.md: --seconds 60 --rounds 40 --round-seconds 2)
 * --chunk-delay-ms 0 answers as fast as the mock can, which saturates the CPU: then every µs of
 * work per request shows up as latency for all 64 streams.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { cpuTimeMs, freePort, percentile, startCtxgate, startMockProcess, type Target } from './peers.ts'
import { smallRequest } from './latency-bodies.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '10' },
    'round-seconds': { type: 'string', default: '1' },
    'chunk-delay-ms': { type: 'string', default: '10' },
    together: { type: 'boolean', default: false },
    'idle-worker': { type: 'boolean', default: false },
  },
})
const downSeconds = Number(values.seconds)
const rounds = Number(values.rounds)
const chunkDelayMs = Number(values['chunk-delay-ms'])
const concurrency = 64
/** Each round runs every target this long. */
const roundSeconds = Number(values['round-seconds'])
/** Both arms in the same moments (64 streams each) instead of one after the other: load from elsewhere hits both alike. */
const together = values.together

/** A local collector that acknowledges every export and keeps the trace bodies, decoded at the end (not during the rounds). */
async function startReceiver(): Promise<{
  url: string
  exports: () => number
  bytes: () => number
  spans: () => number
  close: () => Promise<void>
}> {
  let exports = 0
  let bytes = 0
  const traceBodies: Buffer[] = []
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      chunks.push(chunk)
    })
    incoming.on('end', () => {
      exports++
      if (incoming.url === '/v1/traces') traceBodies.push(Buffer.concat(chunks))
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    bytes: () => bytes,
    spans: () => traceBodies.reduce((sum, body) => sum + spanCount(body), 0),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** Spans in one OTLP protobuf trace export, read with the official schema (as the tests' receiver does). */
function spanCount(body: Buffer): number {
  const decoded = traceRequest.decode(body) as {
    resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[]
  }
  return (decoded.resourceSpans ?? [])
    .flatMap((resource) => resource.scopeSpans ?? [])
    .reduce((sum, scope) => sum + (scope.spans?.length ?? 0), 0)
}
const traceRequest = (
  createRequire(import.meta.url)('otlp-proto-schema/build/src/generated/root.js') as {
    opentelemetry: {
      proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode(bytes: Uint8Array): unknown } } } } }
    }
  }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest

// The latency benches' 2 KB request, streamed.
const body = JSON.stringify({ ...smallRequest, stream: true })
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
  /** ctxgate's CPU time spent on this sample's requests: the whole process, and its main thread. */
  cpuMs: number
  mainThreadCpuMs: number
}

const newSample = (): LoadSample => ({
  latencies: [],
  firstBytes: [],
  failed: 0,
  answers: new Set(),
  cpuMs: 0,
  mainThreadCpuMs: 0,
})

/** CPU time (ms, 10 ms ticks) of a process's main thread, the one requests run on (Linux /proc). */
function mainThreadCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** `concurrency` streams, each sending the next request as soon as its answer has ended, for `seconds`. */
async function load(target: Target, agent: Agent, seconds: number, sample: LoadSample): Promise<void> {
  const until = performance.now() + seconds * 1000
  const cpuBefore = cpuTimeMs(target.pid ?? 0) ?? 0
  const mainBefore = mainThreadCpuMs(target.pid ?? 0)
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
  sample.mainThreadCpuMs += mainThreadCpuMs(target.pid ?? 0) - mainBefore
}

const perRequestUs = (cpuMs: number, sample: LoadSample): string =>
  fmt((cpuMs * 1000) / Math.max(1, sample.latencies.length), 0)

const meanOf = (list: readonly number[]): number => list.reduce((sum, value) => sum + value, 0) / list.length

/** The mean of `differences` with a percentile bootstrap 95% interval (seeded, so a rerun prints the same interval for the same data). */
function bootstrapMean(
  differences: readonly number[],
  resamples = 10_000,
): { mean: number; low: number; high: number } {
  let seed = 0x2545f491
  const random = (): number => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) / 4294967296
  }
  const means = Array.from({ length: resamples }, () =>
    meanOf(
      Array.from({ length: differences.length }, () => differences[Math.floor(random() * differences.length)] ?? 0),
    ),
  ).toSorted((a, b) => a - b)
  return {
    mean: meanOf(differences),
    low: means[Math.floor(resamples * 0.025)] ?? Number.NaN,
    high: means[Math.floor(resamples * 0.975)] ?? Number.NaN,
  }
}

function residentMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'))
  return Number(line?.split(/\s+/)[1] ?? Number.NaN) / 1024
}

const fmt = (value: number, digits = 2): string => value.toFixed(digits)

function mergeInto(total: LoadSample, round: LoadSample): void {
  total.latencies.push(...round.latencies)
  total.firstBytes.push(...round.firstBytes)
  total.failed += round.failed
  total.cpuMs += round.cpuMs
  total.mainThreadCpuMs += round.mainThreadCpuMs
}

const mock = await startMockProcess()
const receiver = await startReceiver()
const deadPort = await freePort()
const exportEnv = (endpoint: string): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_SERVICE_NAME: 'ctxgate-bench',
  // The hand-off alone: every call still goes to the worker, which samples it out and records no metrics.
  ...(values['idle-worker'] ? { OTEL_TRACES_SAMPLER: 'always_off', OTEL_METRICS_EXPORTER: 'none' } : {}),
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

/** The collector is down for the whole window (export to a closed port); export off runs right after for the same time. */
async function collectorDown(): Promise<void> {
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
}

try {
  console.log(
    `OpenTelemetry export overhead: ${concurrency} concurrent streamed Anthropic requests (2 KB), rewrite on, upstream events ${chunkDelayMs} ms apart`,
  )
  console.log(
    `node ${process.version}; ${rounds} rounds of ${roundSeconds} s, ${together ? 'both targets at the same time' : 'one target after the other, order alternating'}\n`,
  )
  // Warm-up: connections, JIT, the exporter's first connection.
  const warmUps = [off, on, down].map(() => newSample())
  for (const [index, target] of [off, on, down].entries())
    await load(target, agentOf(target), 1, warmUps[index] as LoadSample)
  const warmUpRequests = warmUps[1]?.latencies.length ?? 0

  const samples = new Map([off, on].map((target) => [target.name, newSample()]))
  /** Per round: export on's p50 minus export off's, in ms. */
  const paired = { firstByte: [] as number[], answer: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [off, on] : [on, off]
    const roundSamples = new Map(order.map((target) => [target.name, newSample()]))
    const run = (target: Target): Promise<void> =>
      load(target, agentOf(target), roundSeconds, roundSamples.get(target.name) as LoadSample)
    if (together) await Promise.all(order.map(run))
    else for (const target of order) await run(target)
    for (const [name, sample] of roundSamples) mergeInto(samples.get(name) as LoadSample, sample)
    const [offRound, onRound] = [roundSamples.get(off.name), roundSamples.get(on.name)] as [LoadSample, LoadSample]
    paired.firstByte.push(percentile(onRound.firstBytes, 50) - percentile(offRound.firstBytes, 50))
    paired.answer.push(percentile(onRound.latencies, 50) - percentile(offRound.latencies, 50))
  }
  console.log(
    '| ctxgate | requests | failed | first byte p50 ms | first byte p99 ms | answer p50 ms | answer p99 ms | CPU µs/request, main thread | CPU µs/request, process |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [name, sample] of samples)
    console.log(
      `| ${name} | ${sample.latencies.length} | ${sample.failed} | ${fmt(percentile(sample.firstBytes, 50))} | ${fmt(percentile(sample.firstBytes, 99))} | ${fmt(percentile(sample.latencies, 50))} | ${fmt(percentile(sample.latencies, 99))} | ${perRequestUs(sample.mainThreadCpuMs, sample)} | ${perRequestUs(sample.cpuMs, sample)} |`,
    )
  const interval = (differences: readonly number[]): string => {
    const { mean, low, high } = bootstrapMean(differences)
    return `${fmt(mean, 3)} ms (95% interval ${fmt(low, 3)} … ${fmt(high, 3)})`
  }
  console.log(`\nadded p50 with export on, mean of ${rounds} paired rounds (on − off, same round):`)
  console.log(`  first byte ${interval(paired.firstByte)}`)
  console.log(`  answer     ${interval(paired.answer)}`)
  const holds = [paired.firstByte, paired.answer].every((differences) => {
    const { low, high } = bootstrapMean(differences)
    return low >= -0.1 && high <= 0.1
  })
  console.log(
    `target (p50 within 0.1 ms of export off): ${holds ? 'holds — both intervals lie within ±0.1 ms' : 'not shown — an interval reaches past ±0.1 ms'}`,
  )
  const offSample = samples.get(off.name) as LoadSample
  const onSample = samples.get(on.name) as LoadSample
  const p99 = (pick: (sample: LoadSample) => number[]): string =>
    fmt(percentile(pick(onSample), 99) - percentile(pick(offSample), 99), 3)
  console.log(
    `added p99 with export on, pooled: first byte ${p99((sample) => sample.firstBytes)} ms, answer ${p99((sample) => sample.latencies)} ms`,
  )
  // Export on's spans arrive up to OTEL_BSP_SCHEDULE_DELAY (5 s) after its last round.
  await new Promise((resolve) => setTimeout(resolve, 6_000))
  console.log(
    `the receiver got ${receiver.exports()} exports, ${fmt(receiver.bytes() / 1024, 0)} KB: ${receiver.spans()} spans for export on's ${onSample.latencies.length + warmUpRequests} requests (warm-up included)`,
  )

  if (downSeconds > 0) await collectorDown()
} finally {
  for (const agent of agents.values()) await agent.close()
  await Promise.all([off.stop(), on.stop(), down.stop(), mock.stop()])
  await receiver.close()
}
