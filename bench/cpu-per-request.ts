/**
 * CPU time each proxy process spends per request (user + system, from /proc), at a moderate,
 * steady load of 8 concurrent 2 KB requests: steadier than req/s on a shared 2-core machine, and
 * the number that decides how many agents one sidecar core can serve. With baselines (other
 * checkouts' built dist/cli.js), all builds run side by side in the same run.
 * Usage: tsx bench/cpu-per-request.ts [requests-per-round=3000] [rounds=7] [[label=]baseline-cli.js ...]
 */
import { Agent, request } from 'undici'
import { cpuTimeMs, percentile, startCtxgate, startMockProcess, startNodeFloor, type Target } from './peers.ts'

const perRound = Number(process.argv[2] ?? 3_000)
const rounds = Number(process.argv[3] ?? 7)
// Each further argument is another build, `label=path` or just a path (labelled "baseline").
const baselines = process.argv.slice(4).map((argument) => {
  const split = argument.indexOf('=')
  return split > 0
    ? { label: argument.slice(0, split), cli: argument.slice(split + 1) }
    : { label: 'baseline', cli: argument }
})

const mock = await startMockProcess()
const targets: Target[] = [await startNodeFloor(mock.url)]
for (const rewrite of [false, true]) {
  for (const other of baselines) targets.push(await startCtxgate(mock.url, rewrite, { other }))
  targets.push(await startCtxgate(mock.url, rewrite))
}
const agent = new Agent({ connections: 16 })
const body = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'x'.repeat(2_000) }],
})

async function round(target: Target, count: number): Promise<void> {
  let sent = 0
  const worker = async (): Promise<void> => {
    while (sent++ < count) {
      const answer = await request(`${target.url}/v1/messages`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'bench' },
        body,
      })
      await answer.body.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
}

for (const target of targets) await round(target, perRound)
const samples = new Map<string, number[]>(targets.map((target) => [target.name, []]))
for (let index = 0; index < rounds; index++) {
  // Interleaved rounds: the machine's slow moments fall on every target alike.
  for (const target of targets) {
    const before = cpuTimeMs(target.pid ?? 0) ?? Number.NaN
    await round(target, perRound)
    const after = cpuTimeMs(target.pid ?? 0) ?? Number.NaN
    samples.get(target.name)?.push(((after - before) * 1000) / perRound)
  }
}

console.log(`\n## CPU time per request (µs; 8 concurrent 2 KB requests, ${rounds} interleaved rounds of ${perRound})\n`)
console.log('| process | median | lowest | highest |')
console.log('|---|---:|---:|---:|')
for (const target of targets) {
  const values = samples.get(target.name) ?? []
  console.log(
    `| ${target.name} | ${percentile(values, 50).toFixed(0)} | ${Math.min(...values).toFixed(0)} | ${Math.max(...values).toFixed(0)} |`,
  )
}
await agent.close()
for (const target of [...targets, mock]) await target.stop()
