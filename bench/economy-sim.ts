/**
 * Offline simulator of the cache-priced economy: replays every run in a traces folder request by
 * request through the fake upstream's prompt cache (no sockets, exact counts of the fake upstream)
 * under today's budget-only clearing, the trigger-and-target baseline and the cache-priced policy,
 * with and without client cache marks, at the full window and at 64k. Prints billed-equivalent
 * input (input + 1.25 × 5m write + 2 × 1h write + 0.1 × read) per run and in total, ÷ the careful
 * agent (rolling marks) sent direct at the full window, then the curve of the billed ratio against
 * the below-budget start point. The authoritative numbers come from bench/replay-traces.ts.
 * Usage: npx tsx bench/economy-sim.ts --traces DIR [--runs] [--curve-only]; without DIR it says where
 * the public runs come from (the same folder layout as bench/replay-traces.ts reads).
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { buildAnthropicRequests, type ClientCache } from '../src/replay/build-requests.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { howToGetTraces } from './public-traces.ts'
import type { Json } from './economy/describe.ts'
import { budgetOnly, cachePriced, direct, triggerTarget, type RemainingEstimate } from './economy/policies.ts'
import { addBilled, billedEquivalent, emptyBilled, simulateRun, type Billed, type Policy } from './economy/simulate.ts'

const tracesFlag = process.argv.indexOf('--traces')
const tracesDirectory = tracesFlag > 0 ? (process.argv[tracesFlag + 1] ?? '') : ''
if (tracesDirectory === '' || !existsSync(tracesDirectory)) {
  if (tracesDirectory !== '') console.error(`${tracesDirectory} is not a folder\n`)
  process.stderr.write(howToGetTraces())
  process.exit(2)
}
const files = ['claude-code', 'openhands', 'mini-swe-agent'].flatMap((folder) =>
  readdirSync(join(tracesDirectory, folder))
    .filter((name) => /\.(jsonl|json)$/.test(name))
    .toSorted()
    .map((name) => join(tracesDirectory, folder, name)),
)
const conversations = files.flatMap((file) => loadRecording(file, { uncompacted: false }).conversations)
const maxTokens = 4096
const runName = (id: string): string =>
  id
    .split('/')
    .pop()
    ?.replace(/\.(agent_log_raw|claude|traj).*$/, '') ?? id

function bodiesFor(clientCache: ClientCache): Json[][] {
  return conversations.map((conversation) =>
    buildAnthropicRequests(conversation, { maxTokens, clientCache, stream: false }).map((request) => request.body),
  )
}
const bodies = { none: bodiesFor('none'), rolling: bodiesFor('rolling') }

function simulate(policy: Policy, clientCache: 'none' | 'rolling', window: number): Billed[] {
  const options = { window, budget: 0.9 * window - maxTokens, minCacheableTokens: 1024, gapMs: 30_000 }
  return bodies[clientCache].map((runBodies) => simulateRun(runBodies, policy, options))
}
const total = (runs: readonly Billed[]): Billed => runs.reduce(addBilled, emptyBilled)
const thousands = (value: number): string => Math.round(value).toLocaleString('en-US')

const reference = simulate(direct, 'rolling', 200_000)
const referenceTotal = billedEquivalent(total(reference))
const lengths = bodies.none.map((runBodies) => runBodies.length)
const leaveOneOut = (index: number): RemainingEstimate => ({ finished: lengths.filter((_, other) => other !== index) })

const policiesAt = (window: number): Policy[] => [
  budgetOnly(),
  triggerTarget(Math.min(100_000, 0.9 * window - maxTokens), 40_000),
  cachePriced({}),
]

function mainTable(): void {
  console.log(
    `careful agent (rolling marks) sent direct at the full window: ${thousands(referenceTotal)} billed-eq input\n`,
  )
  console.log('| window | client marks | policy | refused | largest | batches | billed-eq input | ÷ careful direct |')
  console.log('|---|---|---|---:|---:|---:|---:|---:|')
  for (const window of [200_000, 64_000])
    for (const clientCache of ['none', 'rolling'] as const)
      for (const policy of [direct, ...policiesAt(window)]) {
        const runs = simulate(policy, clientCache, window)
        const sum = total(runs)
        console.log(
          `| ${window / 1000}k | ${clientCache} | ${policy.name} | ${sum.refused} | ${thousands(sum.largest)} | ${sum.batches} | ${thousands(billedEquivalent(sum))} | ${(billedEquivalent(sum) / referenceTotal).toFixed(3)} |`,
        )
        if (process.argv.includes('--runs'))
          runs.forEach((run, index) =>
            console.log(
              `|  |  | ${runName(conversations[index]?.id ?? '')} | ${run.refused} | ${thousands(run.largest)} | ${run.batches} | ${thousands(billedEquivalent(run))} | ${(billedEquivalent(run) / billedEquivalent(reference[index] as Billed)).toFixed(3)} (own) |`,
            ),
          )
      }
}

function curve(): void {
  console.log('\nBilled ratio (÷ careful direct, full window) against the below-budget start point:\n')
  console.log(
    '| start point | trigger→40k, no marks | cache-priced, no marks | cache-priced, rolling | cache-priced, exact remaining | cache-priced, finished sessions |',
  )
  console.log('|---:|---:|---:|---:|---:|---:|')
  for (const start of [10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 80_000, 100_000]) {
    const ratio = (runs: readonly Billed[]): string => (billedEquivalent(total(runs)) / referenceTotal).toFixed(3)
    const finished = bodies.none.map((runBodies, index) =>
      simulateRun(runBodies, cachePriced({ startTokens: start }, leaveOneOut(index)), {
        window: 200_000,
        budget: 0.9 * 200_000 - maxTokens,
        minCacheableTokens: 1024,
        gapMs: 30_000,
      }),
    )
    console.log(
      `| ${start / 1000}k | ${ratio(simulate(triggerTarget(start, Math.min(40_000, start * 0.4)), 'none', 200_000))} | ${ratio(simulate(cachePriced({ startTokens: start }), 'none', 200_000))} | ${ratio(simulate(cachePriced({ startTokens: start }), 'rolling', 200_000))} | ${ratio(simulate(cachePriced({ startTokens: start }, 'exact'), 'none', 200_000))} | ${ratio(finished)} |`,
    )
  }
}

function notePlacement(): void {
  console.log('\nWhere the system note goes (cache-priced, start 40k, full window, no marks):\n')
  for (const note of ['always', 'first-edit', 'none'] as const) {
    const sum = total(simulate(cachePriced({ startTokens: 40_000 }, 'lindy', note), 'none', 200_000))
    console.log(
      `- note ${note}: ${thousands(billedEquivalent(sum))} (${(billedEquivalent(sum) / referenceTotal).toFixed(3)})`,
    )
  }
}

if (!process.argv.includes('--curve-only')) mainTable()
curve()
notePlacement()
