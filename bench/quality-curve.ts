/**
 * Billed input against needed-but-hidden events (docs/quality.md) for start points and rounds kept:
 * one --strategy file per point, every run of the given recordings, at one window, rolling client
 * cache marks. Prints a Markdown table; the default settings are marked.
 * Usage: tsx bench/quality-curve.ts --window 200000 FILE...
 */
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { replay } from '../src/cli/replay.ts'
import { eventsPer100, shareWithEvents } from '../src/replay/hidden/tally.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    window: { type: 'string', default: '200000' },
    starts: { type: 'string', default: '20000,40000,60000,100000' },
    rounds: { type: 'string', default: '3,10' },
  },
})
if (positionals.length === 0) {
  console.error('usage: tsx bench/quality-curve.ts --window W FILE...')
  process.exit(2)
}
const defaults = { start: 100_000, rounds: 3 }
const points = values.starts
  .split(',')
  .map(Number)
  .flatMap((start) => values.rounds.split(',').map((rounds) => ({ start, rounds: Number(rounds) })))
const files = points.map(({ start, rounds }) => {
  const file = join(tmpdir(), `ctxgate-quality-s${start}-r${rounds}.yaml`)
  writeFileSync(
    file,
    `rewrite:\n  economy: cache-priced\n  keepRecentRounds: ${rounds}\neconomy:\n  startTokens: ${start}\n  keepRecentRounds: ${rounds}\n`,
  )
  return file
})
const started = performance.now()
const report = await replay(
  { window: values.window, 'client-cache': 'rolling', strategy: files, json: true },
  positionals,
  () => undefined,
)
if (!report) process.exit(1)
const direct = report.totals.find((row) => row.variant === 'direct')?.summary.billedEquivalentInput ?? Number.NaN
console.log(
  `${positionals.length} recordings, window ${values.window}, rolling marks, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
)
console.log('| start point | rounds kept | hidden / 100 req | req with one | billed-eq input | ÷ direct | refused |')
console.log('|---:|---:|---:|---:|---:|---:|---:|')
points.forEach((point) => {
  const label = `ctxgate:ctxgate-quality-s${point.start}-r${point.rounds}`
  const total = report.totals.find((row) => row.variant === label)
  const hidden = report.hidden.find((row) => row.run === 'all runs' && row.variant === label)
  if (!total || !hidden) return
  const mark = point.start === defaults.start && point.rounds === defaults.rounds ? ' **(default)**' : ''
  console.log(
    `| ${point.start / 1000}k${mark} | ${point.rounds} | ${eventsPer100(hidden.tally).toFixed(1)} | ${(shareWithEvents(hidden.tally) * 100).toFixed(1)}% | ${Math.round(total.summary.billedEquivalentInput).toLocaleString('en-US')} | ${(total.summary.billedEquivalentInput / direct).toFixed(3)} | ${total.summary.refusedForLength} |`,
  )
})
