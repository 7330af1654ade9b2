/**
 * What a proxy on every model call costs, side by side in one run against the same fake upstream:
 * direct, nginx, Portkey's gateway, ctxgate with rewriting off and on.
 *   1. added latency, sequential, interleaved rounds: small (2 KB) and large (300 KB, 150 rounds)
 *      Anthropic requests, JSON and streamed, the small one also with new text each request and the
 *      large one re-sent and growing by a round per request as a real client's does — median and
 *      p99 of (through proxy − direct);
 *   2. throughput, latency percentiles and the proxy's CPU time per request under concurrency 1, 16, 64
 *      (wrk when installed, autocannon otherwise);
 *   3. streaming: added time to first byte, and the gaps between chunks compared with direct.
 * Usage: tsx bench/latency.ts [rounds=200] [seconds-per-load-step=3] [peers=all|none] [sections=all|added] [baseline-cli.js] [warm-up=0]
 * (peers=none leaves nginx and Portkey out: fewer processes on the two cores; sections=added runs only
 * the added-latency table, each row with ctxgate's added time as a multiple of the floor's; a baseline,
 * another checkout's built dist/cli.js, runs rewriting on beside this build; `warm-up`, a number of
 * rounds of every fixed request kind sent through every target before anything is timed (`''` as the
 * baseline runs it without one): each row otherwise
 * times a process that has served a few hundred requests, whose JavaScript V8 has not yet fully
 * compiled, and a long-running sidecar's steady state is after that). The Node floor — node:http
 * and undici with nothing in between — always runs: it is what any Node proxy pays here.
 */
import { Agent, request } from 'undici'
import { freshSmallRequest, growingRequest, largeRequest, smallRequest } from './latency-bodies.ts'
import { loadTool, runLoad } from './load.ts'
import {
  cpuTimeMs,
  isTarget,
  percentile,
  startCtxgate,
  startMockProcess,
  startNginx,
  startNodeFloor,
  startPortkey,
  type Target,
} from './peers.ts'

const rounds = Number(process.argv[2] ?? 200)
const loadSeconds = Number(process.argv[3] ?? 3)

const mock = await startMockProcess()
const withPeers = (process.argv[4] ?? 'all') !== 'none'
const addedOnly = process.argv[5] === 'added'
const candidates = [
  ...(withPeers ? [await startNginx(Number(new URL(mock.url).port)), await startPortkey(mock.url)] : []),
  await startNodeFloor(mock.url),
  await startCtxgate(mock.url, false),
  await startCtxgate(mock.url, true),
  ...(process.argv[6]
    ? [await startCtxgate(mock.url, true, { other: { cli: process.argv[6], label: 'baseline' } })]
    : []),
]
const proxies = candidates.filter(isTarget)
for (const missing of candidates.filter((candidate) => !isTarget(candidate)))
  console.log(`(${missing.name} could not be run: ${'reason' in missing ? missing.reason : ''})`)
const targets: Target[] = [mock, ...proxies]
const agents = new Map(
  targets.map((target) => [target.name, new Agent({ keepAliveTimeout: 30_000, connections: 128 })]),
)

const small = smallRequest
const large = largeRequest()
const smallBody = JSON.stringify(small)
const cases: readonly { label: string; body: string | ((round: number) => string); stream: boolean }[] = [
  { label: '2 KB, JSON', body: smallBody, stream: false },
  { label: '2 KB, stream', body: JSON.stringify({ ...small, stream: true }), stream: true },
  // A real client's short request is new text (a first turn, a side call): nothing counted before is found again.
  { label: '2 KB new text, JSON', body: (round: number) => JSON.stringify(freshSmallRequest(round)), stream: false },
  { label: '300 KB / 150 rounds, JSON', body: JSON.stringify(large), stream: false },
  { label: '300 KB / 150 rounds, stream', body: JSON.stringify({ ...large, stream: true }), stream: true },
  // A real client's next body is new bytes (its history again and a round more): nothing is the same body again.
  { label: '300 KB growing, JSON', body: (round: number) => JSON.stringify(growingRequest(round)), stream: false },
  {
    label: '300 KB growing, stream',
    body: (round: number) => JSON.stringify({ ...growingRequest(round), stream: true }),
    stream: true,
  },
]

async function timeOne(
  target: Target,
  body: string,
  extraHeaders: Record<string, string> = {},
): Promise<{ total: number; firstByte: number; gaps: number[] }> {
  const started = performance.now()
  const answer = await request(`${target.url}/v1/messages`, {
    method: 'POST',
    dispatcher: agents.get(target.name),
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'bench',
      ...target.headers,
      ...extraHeaders,
    },
    body,
  })
  let firstByte = 0
  let last = 0
  const gaps: number[] = []
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    if (chunk.length === 0) continue
    const now = performance.now()
    if (firstByte === 0) firstByte = now - started
    else gaps.push(now - last)
    last = now
  }
  if (answer.statusCode !== 200) throw new Error(`${target.name}: status ${answer.statusCode}`)
  return { total: performance.now() - started, firstByte, gaps }
}

const ms = (value: number): string => value.toFixed(3)

const warmUpRounds = Number(process.argv[7] ?? 0)
// The fixed bodies only: a growing conversation warmed up here would start its timed rounds shorter than it had been.
for (let round = 0; round < warmUpRounds; round++)
  for (const { body, stream } of cases) {
    if (typeof body !== 'string') continue
    for (const target of targets) if (!stream || target.streams) await timeOne(target, body)
  }

console.log(
  `\n## Added latency, sequential, ${rounds} interleaved rounds per row (ms; added = through proxy − direct in the same round)${warmUpRounds > 0 ? `, after a warm-up of ${warmUpRounds} rounds of every fixed request kind through every target` : ''}\n`,
)
console.log('| request | proxy | direct p50 | proxy p50 | added p50 | added p99 |')
console.log('|---|---|---:|---:|---:|---:|')
for (const { label, body, stream } of cases) {
  const runnable = targets.filter((target) => !stream || target.streams)
  // Every target gets the same body in a round (a growing body: the round's, the same sequence for each).
  const bodyOf = (round: number): string => (typeof body === 'string' ? body : body(round))
  for (let warm = 0; warm < 30; warm++) {
    const sent = bodyOf(warm)
    for (const target of runnable) await timeOne(target, sent)
  }
  const totals = new Map<string, number[]>(runnable.map((target) => [target.name, []]))
  for (let round = 0; round < rounds; round++) {
    const sent = bodyOf(30 + round)
    // Rotate the order each round so no target always goes first.
    const order = runnable.map((_, index) => runnable[(index + round) % runnable.length] as Target)
    for (const target of order) totals.get(target.name)?.push((await timeOne(target, sent)).total)
  }
  const direct = totals.get('direct') ?? []
  const addedOf = (name: string): number[] =>
    (totals.get(name) ?? []).map((value, index) => value - (direct[index] ?? 0))
  const floorP50 = percentile(addedOf('Node floor (http + undici)'), 50)
  for (const target of proxies.filter((proxy) => runnable.includes(proxy))) {
    const through = totals.get(target.name) ?? []
    const added = addedOf(target.name)
    const versusFloor = floorP50 > 0 ? ` (${(percentile(added, 50) / floorP50).toFixed(2)}× floor)` : ''
    console.log(
      `| ${label} | ${target.name} | ${ms(percentile(direct, 50))} | ${ms(percentile(through, 50))} | ${ms(percentile(added, 50))}${versusFloor} | ${ms(percentile(added, 99))} |`,
    )
  }
}
if (addedOnly) {
  for (const agent of agents.values()) await agent.close()
  for (const target of [...proxies, mock]) await target.stop()
  process.exit(0)
}

console.log('\n## Streaming: time to first byte and gaps between chunks (events 20 ms apart upstream; ms)\n')
console.log('| proxy | TTFB p50 | added TTFB p50 | gap p50 | gap p99 | direct gap p50 / p99 |')
console.log('|---|---:|---:|---:|---:|---:|')
const streamBody = JSON.stringify({ ...small, stream: true })
const streamRounds = Math.max(20, Math.floor(rounds / 5))
const streamed = new Map<string, { ttfb: number[]; gaps: number[] }>()
for (let round = 0; round < streamRounds; round++) {
  for (const target of targets.filter((candidate) => candidate.streams)) {
    const result = await timeOne(target, streamBody, { 'x-mock-chunk-delay-ms': '20' })
    const entry = streamed.get(target.name) ?? { ttfb: [], gaps: [] }
    entry.ttfb.push(result.firstByte)
    entry.gaps.push(...result.gaps)
    streamed.set(target.name, entry)
  }
}
const directStream = streamed.get('direct') ?? { ttfb: [], gaps: [] }
for (const target of proxies.filter((proxy) => proxy.streams)) {
  const entry = streamed.get(target.name) ?? { ttfb: [], gaps: [] }
  const added = entry.ttfb.map((value, index) => value - (directStream.ttfb[index] ?? 0))
  console.log(
    `| ${target.name} | ${ms(percentile(entry.ttfb, 50))} | ${ms(percentile(added, 50))} | ${ms(percentile(entry.gaps, 50))} | ${ms(percentile(entry.gaps, 99))} | ${ms(percentile(directStream.gaps, 50))} / ${ms(percentile(directStream.gaps, 99))} |`,
  )
}

console.log(
  `\n## Throughput under load (${loadTool}, ${loadSeconds} s per step, 2 KB JSON requests; CPU = the proxy process's user + system time per request)\n`,
)
console.log('| proxy | connections | req/s | % of direct | p50 ms | p99 ms | added p99 ms | CPU µs/req | errors |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const connections of [1, 16, 64]) {
  let direct = { rate: 0, p99Ms: 0 }
  for (const target of targets) {
    await runLoad(target, connections, 1, smallBody)
    const cpuBefore = target.pid === undefined ? undefined : cpuTimeMs(target.pid)
    const result = await runLoad(target, connections, loadSeconds, smallBody)
    const cpuAfter = target.pid === undefined ? undefined : cpuTimeMs(target.pid)
    if (target.name === 'direct') direct = result
    const cpu =
      cpuBefore === undefined || cpuAfter === undefined
        ? '–'
        : (((cpuAfter - cpuBefore) * 1000) / (result.rate * loadSeconds)).toFixed(0)
    const share = target.name === 'direct' ? '100%' : `${((result.rate / direct.rate) * 100).toFixed(0)}%`
    const addedP99 = target.name === 'direct' ? '–' : ms(result.p99Ms - direct.p99Ms)
    console.log(
      `| ${target.name} | ${connections} | ${result.rate.toFixed(0)} | ${share} | ${ms(result.p50Ms)} | ${ms(result.p99Ms)} | ${addedP99} | ${cpu} | ${result.errors} |`,
    )
  }
}

for (const agent of agents.values()) await agent.close()
for (const target of [...proxies, mock]) await target.stop()
