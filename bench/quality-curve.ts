/**
 * Billed input against needed-but-hidden events (docs/quality.md) for start points, rounds kept and
 * the below-budget need-hazard cap (`economy.maxNeedHazard`):
 * one --strategy file per point, every run of the given recordings, at one window, rolling client
 * cache marks. Prints a Markdown table; the default settings are marked. `--fitting-rounds N` holds
 * what over-budget fitting keeps (`rewrite.keepRecentRounds`) at N; without it, it follows rounds kept.
 * Usage: tsx bench/quality-curve.ts --window 200000 [--fitting-rounds 3] FILE...
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
    hazards: { type: 'string', default: '0.01' },
    'fitting-rounds': { type: 'string' },
  },
})
if (positionals.length === 0) {
  console.error('usage: tsx bench/quality-curve.ts --window W FILE...')
  process.exit(2)
}
const defaults = { start: 100_000, rounds: 3, hazard: 0.01 }
const fittingRounds = values['fitting-rounds'] === undefined ? undefined : Number(values['fitting-rounds'])
const list = (text: string): number[] => text.split(',').map(Number)
const points = list(values.starts).flatMap((start) =>
  list(values.rounds).flatMap((rounds) => list(values.hazards).map((hazard) => ({ start, rounds, hazard }))),
)
const nameOf = (point: (typeof points)[number]): string =>
  `ctxgate-quality-s${point.start}-r${point.rounds}-h${point.hazard}`
const files = points.map((point) => {
  const file = join(tmpdir(), `${nameOf(point)}.yaml`)
  writeFileSync(
    file,
    `rewrite:\n  economy: cache-priced\n  keepRecentRounds: ${fittingRounds ?? point.rounds}\neconomy:\n  startTokens: ${point.start}\n  keepRecentRounds: ${point.rounds}\n  maxNeedHazard: ${point.hazard}\n`,
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
console.log(
  '| start point | rounds kept | max need hazard | hidden / 100 req | req with one | billed-eq input | ÷ direct | refused |',
)
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|')
points.forEach((point) => {
  const label = `ctxgate:${nameOf(point)}`
  const total = report.totals.find((row) => row.variant === label)
  const hidden = report.hidden.find((row) => row.run === 'all runs' && row.variant === label)
  if (!total || !hidden) return
  const mark =
    point.start === defaults.start && point.rounds === defaults.rounds && point.hazard === defaults.hazard
      ? ' **(default)**'
      : ''
  console.log(
    `| ${point.start / 1000}k${mark} | ${point.rounds} | ${point.hazard} | ${eventsPer100(hidden.tally).toFixed(1)} | ${(shareWithEvents(hidden.tally) * 100).toFixed(1)}% | ${Math.round(total.summary.billedEquivalentInput).toLocaleString('en-US')} | ${(total.summary.billedEquivalentInput / direct).toFixed(3)} | ${total.summary.refusedForLength} |`,
  )
})
