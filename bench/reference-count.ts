/**
 * What counting each prompt by the reference vocabulary costs (docs/estimates.md), beside the
 * estimate it goes with: every request of every recording, parsed as the hook parses it (re-sent
 * messages come back as the same frozen values), viewed once with the estimator and once with the
 * reference (cl100k, memoised per string and per message). Only what is new to the process is
 * counted again, so this is the cost of new content: milliseconds per request, and the reference's
 * characters and tokens per second on it.
 * Usage: tsx bench/reference-count.ts FILE... (recordings, e.g. the long runs: <long>/*.ctxgate.jsonl)
 */
import { anthropicMessagesAdapter } from '../src/providers/anthropic/messages-adapter.ts'
import { exactCounter, loadExactCounter, referenceEncoding } from '../src/providers/openai/tokenizer/exact-counters.ts'
import { buildAnthropicRequests } from '../src/replay/build-requests.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { TokenEstimator } from '../src/rewrite/estimate.ts'
import { promptTokens } from '../src/rewrite/prompt-tokens.ts'
import { parseKeepingNumbers } from '../src/util/exact-numbers.ts'
import { howToGetTraces } from './public-traces.ts'

const files = process.argv.slice(2)
if (files.length === 0) {
  process.stderr.write(howToGetTraces())
  process.exit(2)
}
await loadExactCounter(referenceEncoding)
const counter = exactCounter(referenceEncoding)
if (!counter) throw new Error(`${referenceEncoding} did not load`)

const estimator = new TokenEstimator()
const reference = new TokenEstimator({
  counterFor: () => undefined,
  ready: () => Promise.resolve(),
  reference: () => counter,
}).reference() as TokenEstimator
/** Every string the reference has counted, so the new characters of each request can be told. */
const seen = new Set<string>()
const newCharsOf = (value: unknown): number => {
  if (typeof value === 'string') {
    if (seen.has(value)) return 0
    seen.add(value)
    return value.length
  }
  if (Array.isArray(value)) return value.reduce((sum: number, each) => sum + newCharsOf(each), 0)
  if (value !== null && typeof value === 'object')
    return Object.values(value).reduce((sum: number, each) => sum + newCharsOf(each), 0)
  return 0
}

const estimateMs: number[] = []
const referenceMs: number[] = []
let newChars = 0
let newTokens = 0
let bodies = 0
for (const file of files)
  for (const conversation of loadRecording(file, { uncompacted: false }).conversations) {
    let previous = 0
    for (const replayed of buildAnthropicRequests(conversation, {
      maxTokens: 4096,
      clientCache: 'none',
      stream: false,
    })) {
      const text = JSON.stringify(replayed.body)
      const json = parseKeepingNumbers(Buffer.from(text)).value as Record<string, unknown>
      bodies += text.length
      let started = performance.now()
      promptTokens(anthropicMessagesAdapter.view(json, estimator))
      estimateMs.push(performance.now() - started)
      started = performance.now()
      const counted = promptTokens(anthropicMessagesAdapter.view(json, reference))
      referenceMs.push(performance.now() - started)
      newChars += newCharsOf(json)
      // Tokens new to the process, as the reference counts the prompt's growth (a rewritten history counts whole).
      newTokens += counted >= previous ? counted - previous : counted
      previous = counted
    }
  }

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0)
const quantile = (values: readonly number[], q: number): number => {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0
}
const ms = (value: number): string => value.toFixed(2)
console.log(
  `${estimateMs.length} requests, ${(bodies / 1e6).toFixed(1)} MB of bodies, ${(newChars / 1e6).toFixed(2)} M characters new to the process (${(newTokens / 1e6).toFixed(2)} M reference tokens)\n`,
)
console.log('| count | total s | per request p50 ms | p90 ms | p99 ms | max ms | new characters / s | new tokens / s |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
for (const [name, times] of [
  ['estimate (characters)', estimateMs],
  [`reference (${referenceEncoding})`, referenceMs],
] as const) {
  const seconds = sum(times) / 1000
  console.log(
    `| ${name} | ${seconds.toFixed(2)} | ${ms(quantile(times, 0.5))} | ${ms(quantile(times, 0.9))} | ${ms(quantile(times, 0.99))} | ${ms(quantile(times, 1))} | ${(newChars / seconds / 1e6).toFixed(2)} M | ${(newTokens / seconds / 1e6).toFixed(2)} M |`,
  )
}
