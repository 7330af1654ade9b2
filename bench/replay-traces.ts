/**
 * Replays every recording under a folder at the full window and at 64k, with and without client
 * cache marks, and prints the tables as Markdown. With --write it replaces the replay section of
 * BENCHMARKS.md. Usage: tsx bench/replay-traces.ts FOLDER [--write]; without FOLDER it says where
 * the public runs come from and how to fetch them.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { replay } from '../src/cli/replay.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { billedEquivalentInput } from '../src/billing/usage-totals.ts'
import { withinFloor } from '../src/replay/floor-bound.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { runName } from '../src/replay/report/rows.ts'
import { replayConversation } from '../src/replay/run-replay.ts'
import { howToGetTraces } from './public-traces.ts'

const folder = process.argv.slice(2).find((argument) => !argument.startsWith('--'))
if (folder === undefined || !existsSync(folder) || !statSync(folder).isDirectory()) {
  if (folder !== undefined) console.error(`${folder} is not a folder\n`)
  process.stderr.write(howToGetTraces())
  process.exit(2)
}

/**
 * Recordings under the folder, sorted, found at any depth. A `raw/` folder holds sources the recordings
 * were converted from (not recordings), and `long/` the long runs, which BENCHMARKS.md replays on their own.
 */
function recordingsUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(jsonl|json)$/.test(name))
    .filter((name) => !name.split(sep).some((part) => part === 'raw' || part === 'long'))
    .toSorted()
    .map((name) => join(directory, name))
}
const files = recordingsUnder(folder)
if (files.length === 0) {
  console.error(`no *.json or *.jsonl recordings under ${folder}\n`)
  process.stderr.write(howToGetTraces())
  process.exit(2)
}
const shown = files.map((file) => `<traces>/${relative(folder, file)}`)

type Report = NonNullable<Awaited<ReturnType<typeof replay>>>
const quiet = (): void => undefined
const totalOf = (report: Report, variant: string) => {
  const row = report.totals.find((entry) => entry.variant === variant)
  if (!row) throw new Error(`no ${variant} row`)
  return row.summary
}
const billedOf = billedEquivalentInput
const thousands = (value: number): string => Math.round(value).toLocaleString('en-US')
const mark = (met: boolean): string => (met ? 'met' : '**not met**')

const sections: string[] = []
const reports = new Map<string, Report>()
for (const [window, label] of [
  ['200000', 'full window (200k)'],
  ['64000', '64k window'],
] as const) {
  for (const clientCache of ['none', 'rolling'] as const) {
    const output: string[] = []
    const started = performance.now()
    const report = await replay({ window, 'client-cache': clientCache, markdown: true }, files, (text) =>
      output.push(text),
    )
    if (report) reports.set(`${window}/${clientCache}`, report)
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    sections.push(
      `### ${label}, client cache marks: ${clientCache}\n\n\`npx tsx src/cli.ts replay <traces> --window ${window} --client-cache ${clientCache} --markdown\` (${seconds} s)\n\n${output.join('').trim()}\n`,
    )
  }
}

// Strategies side by side: totals over every run.
const strategyRows: string[] = []
for (const [window, clientCache] of [
  ['200000', 'none'],
  ['200000', 'rolling'],
  ['64000', 'none'],
  ['64000', 'rolling'],
] as const) {
  const strategies = ['clear-only', 'batched-fold', 'eager-fold'].map(
    (name) => new URL(`../config/strategies/${name}.yaml`, import.meta.url).pathname,
  )
  const report = await replay({ window, 'client-cache': clientCache, strategy: strategies, json: true }, files, quiet)
  if (!report) continue
  for (const row of report.totals) {
    const summary = row.summary
    strategyRows.push(
      `| ${window === '200000' ? '200k' : '64k'} | ${clientCache} | ${row.variant} | ${summary.refusedForLength} | ${thousands(summary.largestPromptTokens)} | ${thousands(summary.billedEquivalentInput)} | ${(summary.cacheReadShare * 100).toFixed(1)}% | ${summary.prefixBreaks} | ${thousands(summary.tokensRemoved)} |`,
    )
  }
}
sections.push(
  `### Strategies compared (totals over all runs)\n\n\`npx tsx src/cli.ts replay <traces> --window W --client-cache C --strategy config/strategies/clear-only.yaml --strategy config/strategies/batched-fold.yaml --strategy config/strategies/eager-fold.yaml\`\n\n| window | client marks | variant | refused | largest | billed-eq input | read share | prefix breaks | removed |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n${strategyRows.join('\n')}\n`,
)

// The cache-priced economy against budget-only editing, and the start-point curve.
const strategyFile = (name: string): string => new URL(`../config/strategies/${name}.yaml`, import.meta.url).pathname
const careful = reports.get('200000/rolling')
const carefulDirect = careful ? totalOf(careful, 'direct').billedEquivalentInput : Number.NaN
const economyRows: string[] = []
const economyTotals = new Map<string, { billed: number; refused: number; worstRun: number }>()
for (const [window, clientCache] of [
  ['200000', 'none'],
  ['200000', 'rolling'],
  ['64000', 'none'],
  ['64000', 'rolling'],
] as const) {
  const report = await replay(
    { window, 'client-cache': clientCache, strategy: ['budget-only', 'cache-priced'].map(strategyFile), json: true },
    files,
    quiet,
  )
  if (!report) continue
  for (const row of report.totals) {
    const worstRun = Math.max(
      ...report.runs.flatMap((run) =>
        run.rows.filter((entry) => entry.variant === row.variant).map((entry) => entry.ratioToDirect ?? 0),
      ),
    )
    const summary = row.summary
    economyTotals.set(`${window}/${clientCache}/${row.variant}`, {
      billed: summary.billedEquivalentInput,
      refused: summary.refusedForLength,
      worstRun,
    })
    economyRows.push(
      `| ${window === '200000' ? '200k' : '64k'} | ${clientCache} | ${row.variant} | ${summary.refusedForLength} | ${thousands(summary.billedEquivalentInput)} | ${(summary.billedEquivalentInput / carefulDirect).toFixed(3)} | ${row.variant === 'direct' ? '—' : worstRun.toFixed(3)} | ${summary.prefixBreaks} | ${thousands(summary.tokensRemoved)} |`,
    )
  }
}
sections.push(
  `### The cache-priced economy against budget-only editing (totals over all runs)\n\n\`npx tsx src/cli.ts replay <traces> --window W --client-cache C --strategy config/strategies/budget-only.yaml --strategy config/strategies/cache-priced.yaml\`. "÷ careful direct" divides by the agent with rolling cache marks sent direct at the full window (${thousands(carefulDirect)}); "worst run" is the largest ratio of one run to the same run sent direct.\n\n| window | client marks | variant | refused | billed-eq input | ÷ careful direct | worst run ÷ its direct | prefix breaks | removed |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n${economyRows.join('\n')}\n`,
)

const startPoints = [20_000, 30_000, 40_000, 50_000, 60_000, 80_000, 100_000]
const curveFiles = startPoints.map((start) => {
  const file = join(tmpdir(), `ctxgate-start-${start}.yaml`)
  writeFileSync(file, `rewrite:\n  economy: cache-priced\neconomy:\n  startTokens: ${start}\n`)
  return file
})
const curveRows: string[] = []
for (const clientCache of ['none', 'rolling'] as const) {
  const report = await replay(
    {
      window: '200000',
      'client-cache': clientCache,
      strategy: [strategyFile('budget-only'), ...curveFiles],
      json: true,
    },
    files,
    quiet,
  )
  if (!report) continue
  const ratios = report.totals
    .filter((row) => row.variant !== 'direct')
    .map((row) => (row.summary.billedEquivalentInput / carefulDirect).toFixed(3))
  curveRows.push(`| ${clientCache} | ${ratios.join(' | ')} |`)
}
sections.push(
  `### Billed input against the below-budget start point (full window, ÷ careful direct)\n\n\`economy.startTokens\` from 20k to 100k (the default), with everything else at its default; one \`--strategy\` file per start point (\`rewrite: {economy: cache-priced}\`, \`economy: {startTokens: N}\`). Lower start points edit earlier and more often.\n\n| client marks | budget-only | ${startPoints.map((start) => `${start / 1000}k`).join(' | ')} |\n|---|---:|${startPoints.map(() => '---:').join('|')}|\n${curveRows.join('\n')}\n`,
)

// What the default quality floor leaves out of reach: each run sent through ctxgate with no below-budget edits
// (budget-only), rolling marks, full window; the requests before the first one the economy may edit cost the same
// under any policy that keeps the floor.
const floor = loadConfig({}).economy
const floorRows: string[] = []
let floorFixed = 0
for (const file of files) {
  for (const conversation of loadRecording(file, { uncompacted: false }).conversations) {
    const result = await replayConversation(conversation, {
      window: 200_000,
      minCacheableTokens: 1_024,
      maxTokens: 4_096,
      clientCache: 'rolling',
      stream: false,
      variants: [{ label: 'ctxgate:budget-only', configFile: strategyFile('budget-only') }],
    })
    const outcomes = result.outcomes['ctxgate:budget-only'] ?? []
    const share = withinFloor(outcomes, floor)
    floorFixed += share.billedWithin
    const total = outcomes.reduce((sum, outcome) => sum + billedOf(outcome.usage), 0)
    floorRows.push(
      `| ${runName(result)} | ${outcomes.length} | ${share.requestsWithin} | ${thousands(share.billedWithin)} | ${thousands(total)} | ${(share.billedWithin / Math.max(1, total)).toFixed(3)} |`,
    )
  }
}
const floorBound = floorFixed / carefulDirect
sections.push(
  `### What the default quality floor leaves out of reach (full window, rolling marks)

Below budget the economy edits nothing in a session's first ${floor.shortSessionRequests - 1} requests or while ctxgate's estimate of the conversation as the client sent it is under \`economy.startTokens\` (${thousands(floor.startTokens)}). Every request before the first one it may edit is sent exactly as with no economy at all, so its bill (through ctxgate with \`budget-only\`, which places the same breakpoints) is one that no policy keeping the floor can lower. Even if every later request cost nothing, the total could not go below the sum of these: **${thousands(floorFixed)}, ${floorBound.toFixed(3)}× the careful agent sent direct** (${thousands(carefulDirect)}). Lower start points (the curve above) are how to save more.

| run | requests | before the floor lets an edit | their billed-eq input | run total, budget-only | share fixed |
|---|---:|---:|---:|---:|---:|
${floorRows.join('\n')}
`,
)

const uncompacted: string[] = []
await replay(
  { window: '200000', uncompacted: true, markdown: true },
  files.filter((file) => file.includes('issue-271')),
  (text) => uncompacted.push(text),
)
sections.push(
  `### issue-271 with its compaction undone (what the agent would have sent), full window, no marks\n\n\`npx tsx src/cli.ts replay <traces>/claude-code/issue-271_04_implementation_execute.claude.agent_log_raw.jsonl --uncompacted --markdown\`\n\n${uncompacted.join('').trim()}\n`,
)

// The rewrite engine's targets, checked on the numbers above.
const fullNone = reports.get('200000/none')
const fullRolling = reports.get('200000/rolling')
const smallNone = reports.get('64000/none')
const targets: string[] = []
if (fullNone && fullRolling && smallNone) {
  const small = totalOf(smallNone, 'ctxgate')
  const noMarksThrough = totalOf(fullNone, 'ctxgate').billedEquivalentInput
  const rollingDirect = totalOf(fullRolling, 'direct').billedEquivalentInput
  const rollingThrough = totalOf(fullRolling, 'ctxgate').billedEquivalentInput
  targets.push(
    `| 64k window, no cache marks: requests refused through ctxgate | ${small.refusedForLength} of ${small.requests} (direct: ${totalOf(smallNone, 'direct').refusedForLength}) | ${mark(small.refusedForLength === 0)} |`,
  )
  targets.push(
    `| 64k window: largest prompt through ctxgate, as the fake upstream counts it | ${thousands(small.largestPromptTokens)} ≤ 64,000 | ${mark(small.largestPromptTokens <= 64_000)} |`,
  )
  targets.push(
    `| full window: no marks through ctxgate ≤ rolling marks direct (billed-eq input) | ${thousands(noMarksThrough)} vs ${thousands(rollingDirect)} | ${mark(noMarksThrough <= rollingDirect)} |`,
  )
  targets.push(
    `| full window: rolling marks through ctxgate ≤ rolling marks direct | ${thousands(rollingThrough)} vs ${thousands(rollingDirect)} | ${mark(rollingThrough <= rollingDirect)} |`,
  )
}
const cheapest = economyTotals.get('200000/none/ctxgate:cache-priced')
const carefulThrough = economyTotals.get('200000/rolling/ctxgate:cache-priced')
const smallToday = economyTotals.get('64000/none/ctxgate:budget-only')
const smallEconomy = economyTotals.get('64000/none/ctxgate:cache-priced')
if (cheapest && carefulThrough && smallToday && smallEconomy) {
  const ratio = (value: number): string => (value / carefulDirect).toFixed(3)
  // Where the floor alone puts a target out of reach, the row says so with the bound.
  const reach = (target: number): string =>
    floorBound > target ? ` (out of reach: floor bound ${floorBound.toFixed(3)})` : ''
  targets.push(
    `| economy, full window: no marks through ctxgate ≤ 0.75× careful direct (stretch 0.65×) | ${ratio(cheapest.billed)} | ${mark(cheapest.billed <= 0.75 * carefulDirect)}${reach(0.75)} |`,
  )
  targets.push(
    `| economy, full window: careful agent through ctxgate ≤ 0.78× direct in total | ${ratio(carefulThrough.billed)} | ${mark(carefulThrough.billed <= 0.78 * carefulDirect)}${reach(0.78)} |`,
  )
  targets.push(
    `| economy, full window: no run of the careful agent above 1.02× its direct | worst ${carefulThrough.worstRun.toFixed(3)} | ${mark(carefulThrough.worstRun <= 1.02)} |`,
  )
  targets.push(
    `| economy, 64k window: nothing refused, billed no more than budget-only | ${smallEconomy.refused} refused; ${thousands(smallEconomy.billed)} vs ${thousands(smallToday.billed)} | ${mark(smallEconomy.refused === 0 && smallEconomy.billed <= smallToday.billed)} |`,
  )
}
const targetTable = `| target | measured | |\n|---|---|---|\n${targets.join('\n')}\n`

const body = `<!-- replay:start -->\nGenerated by \`npm run bench:replay -- <traces> --write\` (\`tsx bench/replay-traces.ts <traces> --write\`) on ${new Date().toISOString().slice(0, 10)}. Traces: ${shown.map((file) => `\`${file}\``).join(', ')}.\n\n### Rewrite engine targets\n\n${targetTable}\n${sections.join('\n')}<!-- replay:end -->`

if (process.argv.includes('--write')) {
  const path = new URL('../BENCHMARKS.md', import.meta.url).pathname
  const current = existsSync(path) ? readFileSync(path, 'utf8') : ''
  const next = current.includes('<!-- replay:start -->')
    ? current.replace(/<!-- replay:start -->[\s\S]*<!-- replay:end -->/, body)
    : `${current}\n${body}\n`
  writeFileSync(path, next)
  console.log(`updated ${path}`)
} else console.log(body)
