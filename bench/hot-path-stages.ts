/**
 * Where a proxied request's time goes, stage by stage, in ctxgate (rewriting on), a baseline build
 * and the Node floor (bench/node-floor-proxy.ts), side by side in one run: each proxy process is
 * loaded with bench/stage-clock.ts, which stamps arrival, body read, the upstream request's
 * creation, its headers and body written, the answer's headers, the client's headers, end() called
 * and returned, and when the work left in that turn of the loop (metrics, log line) is done.
 * Sequential, interleaved rounds against the same fake upstream; medians in ms from arrival.
 * Usage: tsx bench/hot-path-stages.ts [rounds=300] [baseline-cli.js]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { largeRequest, smallRequest } from './latency-bodies.ts'
import { percentile, startCtxgate, startMockProcess, startNodeFloor, type Target } from './peers.ts'

const rounds = Number(process.argv[2] ?? 300)
const warmRounds = 40
const baselineCli = process.argv[3]

const mock = await startMockProcess()
const stageDir = mkdtempSync(join(tmpdir(), 'ctxgate-stages-'))
// Only the proxies carry the clock (the fake upstream was started without it).
process.env['NODE_OPTIONS'] = `--import tsx --import ${new URL('./stage-clock.ts', import.meta.url).href}`
process.env['CTXGATE_STAGE_DIR'] = stageDir
const proxies: (Target & { readonly pid: number })[] = [
  await startNodeFloor(mock.url),
  await startCtxgate(mock.url, true),
  ...(baselineCli ? [await startCtxgate(mock.url, true, { other: { cli: baselineCli, label: 'baseline' } })] : []),
]
delete process.env['NODE_OPTIONS']
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 16 })

const large = largeRequest()
const cases = [
  { label: '2 KB JSON', body: JSON.stringify(smallRequest) },
  { label: '2 KB stream', body: JSON.stringify({ ...smallRequest, stream: true }) },
  { label: '208 KB / 150 rounds JSON', body: JSON.stringify(large) },
]

async function send(target: Target, body: string): Promise<number> {
  const started = performance.now()
  const answer = await request(`${target.url}/v1/messages`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'bench' },
    body,
  })
  await answer.body.dump({ limit: Number.POSITIVE_INFINITY })
  if (answer.statusCode !== 200) throw new Error(`${target.name}: status ${answer.statusCode}`)
  return performance.now() - started
}

const targets = [mock, ...proxies]
const clientMs = new Map<string, number[][]>(targets.map((target) => [target.name, cases.map(() => [])]))
for (const [index, { body }] of cases.entries()) {
  for (let round = 0; round < warmRounds + rounds; round++) {
    // Rotate the order each round so no target always goes first.
    for (let step = 0; step < targets.length; step++) {
      const target = targets[(step + round) % targets.length] as Target
      const ms = await send(target, body)
      if (round >= warmRounds) clientMs.get(target.name)?.[index]?.push(ms)
    }
  }
}
await agent.close()
for (const target of [...proxies, mock]) await target.stop()

function median(records: Record<string, number>[], stage: string): number | undefined {
  const values = records.map((record) => record[stage]).filter((value) => value !== undefined)
  return values.length === 0 ? undefined : percentile(values, 50)
}

const ms = (value: number | undefined): string => (value === undefined || Number.isNaN(value) ? '–' : value.toFixed(3))
for (const [index, { label }] of cases.entries()) {
  const perTarget = proxies.map((proxy) => {
    const all = JSON.parse(readFileSync(join(stageDir, `${proxy.pid}.json`), 'utf8')) as Record<string, number>[]
    return all.slice(index * (warmRounds + rounds) + warmRounds, (index + 1) * (warmRounds + rounds))
  })
  const stages = [...new Set(perTarget.flatMap((records) => records.flatMap((record) => Object.keys(record))))]
  stages.sort((a, b) => (median(perTarget[1] ?? [], a) ?? 0) - (median(perTarget[1] ?? [], b) ?? 0))
  console.log(`\n## ${label}: stage p50, ms after the request arrived (${rounds} interleaved rounds)\n`)
  console.log(`| stage | ${proxies.map((proxy) => proxy.name).join(' | ')} |`)
  console.log(`|---|${proxies.map(() => '---:').join('|')}|`)
  for (const stage of stages)
    console.log(`| ${stage} | ${perTarget.map((records) => ms(median(records, stage))).join(' | ')} |`)
  const direct = clientMs.get(mock.name)?.[index] ?? []
  const added = (name: string): number =>
    percentile(
      (clientMs.get(name)?.[index] ?? []).map((value, round) => value - (direct[round] ?? 0)),
      50,
    )
  console.log(
    `| client-seen added p50 (through − direct) | ${proxies.map((proxy) => ms(added(proxy.name))).join(' | ')} |`,
  )
}
rmSync(stageDir, { recursive: true, force: true })
