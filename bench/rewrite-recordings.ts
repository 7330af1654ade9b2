/**
 * Rewrite CPU on recorded sessions, with and without the reference count (docs/estimates.md): every
 * request of every recording replayed in order through a fresh Anthropic hook (200k window, no
 * upstream answers), once with the plain estimator and once with the one that also counts by the
 * reference vocabulary, the two alternating recording by recording and pass by pass. Real tool
 * output, unlike bench/rewrite.ts's generated rounds, is mostly text new to the process.
 * Usage: tsx bench/rewrite-recordings.ts [--passes 3] FILE... (e.g. <long>/*.ctxgate.jsonl)
 */
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import { buildAnthropicRequests } from '../src/replay/build-requests.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { exactCounter, referenceEncoding } from '../src/providers/openai/tokenizer/exact-counters.ts'
import { howToGetTraces } from './public-traces.ts'
import { anthropicHook, loadReference } from './standalone-hook.ts'

const { values, positionals: files } = parseArgs({
  options: { passes: { type: 'string', default: '3' } },
  allowPositionals: true,
})
if (files.length === 0) {
  process.stderr.write(howToGetTraces())
  process.exit(2)
}
const passes = Math.max(1, Math.floor(Number(values.passes)) || 1)
await loadReference()
// The vocabulary's first count builds its tables: not a request's cost.
exactCounter(referenceEncoding)?.('warm up')

/** Each recording's runs as the bodies a client sends, in order. */
const recordings = files.map((file) => ({
  name: basename(file).replace(/\.ctxgate\.jsonl$/, ''),
  runs: loadRecording(file, { uncompacted: false }).conversations.map((conversation) =>
    buildAnthropicRequests(conversation, { maxTokens: 4096, clientCache: 'none', stream: false }).map((replayed) =>
      Buffer.from(JSON.stringify(replayed.body)),
    ),
  ),
}))

/** CPU milliseconds (this process's, so other work on a loaded machine counts less) to take every run of one recording through a fresh hook. */
async function timeRecording(runs: readonly Buffer[][], reference: boolean): Promise<number> {
  let elapsed = 0
  for (const bodies of runs) {
    const hook = anthropicHook(200_000, {}, { reference })
    const started = process.cpuUsage()
    for (const body of bodies) await hook(body, {})
    const used = process.cpuUsage(started)
    elapsed += (used.user + used.system) / 1000
  }
  return elapsed
}

const median = (samples: readonly number[]): number =>
  samples.toSorted((a, b) => a - b)[Math.floor(samples.length / 2)] as number
console.log('| recording | requests | plain, CPU ms | with reference count, CPU ms | ratio |')
console.log('|---|---:|---:|---:|---:|')
let plainTotal = 0
let referenceTotal = 0
for (const { name, runs } of recordings) {
  const plain: number[] = []
  const counted: number[] = []
  for (let pass = 0; pass < passes; pass++) {
    // Alternate which goes first: neither always runs on a warmer JIT or a quieter moment.
    const order = pass % 2 === 0 ? [false, true] : [true, false]
    for (const reference of order) (reference ? counted : plain).push(await timeRecording(runs, reference))
  }
  const [p, c] = [median(plain), median(counted)]
  plainTotal += p
  referenceTotal += c
  const requests = runs.reduce((sum, run) => sum + run.length, 0)
  console.log(`| ${name} | ${requests} | ${p.toFixed(0)} | ${c.toFixed(0)} | ${(c / p).toFixed(2)} |`)
}
console.log(
  `| all | | ${plainTotal.toFixed(0)} | ${referenceTotal.toFixed(0)} | ${(referenceTotal / plainTotal).toFixed(2)} |`,
)
