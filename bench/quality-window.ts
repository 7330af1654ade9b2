/**
 * Needed-but-hidden events and the bill at one window (e.g. 64k, where the edits are forced), per
 * run, against the same runs sent direct with rolling marks at a window that holds them whole
 * ("careful direct", which no window refuses). Says where the events came from: the clearing
 * class of the output at that request and what became of it (cleared, folded, dropped with its
 * round). Beside each run, the hindsight bound (src/replay/hidden/bound.ts): the fewest events any
 * policy keeping or removing whole blocks could give at the same budget (0.9 of the window).
 * Usage: tsx bench/quality-window.ts --window 64000 --careful-window 1000000 [--strategy F]... FILE...
 */
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import { loadRecordingFile } from '../src/replay/importers/load-recording.ts'
import { hindsightBound } from '../src/replay/hidden/bound.ts'
import { shapedBound } from '../src/replay/hidden/shaped-bound.ts'
import { eventsPer100, shareWithEvents, type HiddenTally } from '../src/replay/hidden/tally.ts'
import { runName } from '../src/replay/report/rows.ts'
import { directLabel, replayConversation, type ReplayOptions, type Variant } from '../src/replay/run-replay.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    window: { type: 'string', default: '64000' },
    'careful-window': { type: 'string', default: '1000000' },
    strategy: { type: 'string', multiple: true },
  },
})
if (positionals.length === 0) {
  console.error('usage: tsx bench/quality-window.ts --window 64000 --careful-window 1000000 [--strategy F]... FILE...')
  process.exit(2)
}
const strategies = values.strategy ?? []
const variants: Variant[] =
  strategies.length === 0
    ? [{ label: 'ctxgate' }]
    : strategies.map((file) => ({ label: basename(file).replace(/\.ya?ml$/, ''), configFile: file }))
const base: Omit<ReplayOptions, 'window' | 'variants'> = {
  minCacheableTokens: 1024,
  maxTokens: 4096,
  clientCache: 'rolling',
  stream: false,
}

interface Row {
  readonly run: string
  readonly variant: string
  readonly sent: number
  readonly refused: number
  readonly tally: HiddenTally
  readonly billed: number
  readonly careful: number
  /** The hindsight bound's events, and the requests it cannot send either. */
  readonly boundEvents: number
  readonly boundRefused: number
  /** The same with ctxgate's edits only (shaped-bound.ts): results go, a prefix of messages goes, the agent's own calls stay. */
  readonly shapedEvents: number
  readonly shapedRefused: number
  /** The same bound with the agent's tool inputs kept whole (before round 10's input clearing). */
  readonly inputsKeptEvents: number
}

/** ctxgate's default budget, as a share of the window (config/default.yaml). */
const budgetShare = 0.9

const started = performance.now()
const rows: Row[] = []
for (const file of positionals) {
  const loaded = await loadRecordingFile(file, { uncompacted: false })
  for (const conversation of loaded.conversations) {
    const careful = await replayConversation(conversation, {
      ...base,
      window: Number(values['careful-window']),
      variants: [{ label: directLabel, direct: true }],
    })
    const forced = await replayConversation(conversation, { ...base, window: Number(values.window), variants })
    const bound = hindsightBound(conversation, Number(values.window) * budgetShare)
    const shaped = shapedBound(conversation, Number(values.window) * budgetShare)
    const inputsKept = shapedBound(conversation, Number(values.window) * budgetShare, { clearInputs: false })
    for (const variant of variants) {
      const summary = forced.summaries[variant.label]
      const tally = forced.hidden?.[variant.label]
      if (!summary || !tally) continue
      rows.push({
        run: runName(forced),
        variant: variant.label,
        sent: tally.requests,
        refused: summary.refusedForLength,
        tally,
        billed: summary.billedEquivalentInput,
        careful: careful.summaries[directLabel]?.billedEquivalentInput ?? Number.NaN,
        boundEvents: bound.events,
        boundRefused: bound.refused,
        shapedEvents: shaped.events,
        shapedRefused: shaped.refused,
        inputsKeptEvents: inputsKept.events,
      })
    }
  }
}

const share = (counts: Readonly<Record<string, number>>, events: number): string =>
  events === 0
    ? '—'
    : Object.entries(counts)
        .toSorted((a, b) => b[1] - a[1])
        .map(([key, count]) => `${key} ${Math.round((count / events) * 100)}%`)
        .join(', ')
const cells = (row: Row): string[] => [
  row.run.slice(0, 48),
  row.variant,
  String(row.sent),
  String(row.refused),
  String(row.tally.events),
  eventsPer100(row.tally).toFixed(1),
  `${row.boundEvents} (${row.boundRefused} refused)`,
  `${row.shapedEvents} (${row.shapedRefused} refused)`,
  String(row.inputsKeptEvents),
  `${(shareWithEvents(row.tally) * 100).toFixed(1)}%`,
  share(row.tally.byRisk, row.tally.events),
  share(row.tally.byFate, row.tally.events),
  Math.round(row.billed).toLocaleString('en-US'),
  Math.round(row.careful).toLocaleString('en-US'),
  (row.billed / row.careful).toFixed(3),
]
const total = (variant: string, sentWhole = false): Row => {
  // sentWhole: only the runs ctxgate refused nothing of, so refused requests (which bill nothing) do not flatter the bill.
  const mine = rows.filter((row) => row.variant === variant && (!sentWhole || row.refused === 0))
  const add = (pick: (tally: HiddenTally) => Readonly<Record<string, number>>): Record<string, number> => {
    const merged: Record<string, number> = {}
    for (const row of mine)
      for (const [key, count] of Object.entries(pick(row.tally))) merged[key] = (merged[key] ?? 0) + count
    return merged
  }
  const sum = (pick: (row: Row) => number): number => mine.reduce((acc, row) => acc + pick(row), 0)
  const worst = Math.max(...mine.map((row) => row.billed / row.careful))
  return {
    run: `**${sentWhole ? 'runs with nothing refused' : 'all runs'}** (worst run ${worst.toFixed(3)})`,
    variant,
    sent: sum((row) => row.sent),
    refused: sum((row) => row.refused),
    tally: {
      requests: sum((row) => row.tally.requests),
      events: sum((row) => row.tally.events),
      requestsWithEvents: sum((row) => row.tally.requestsWithEvents),
      bySource: add((tally) => tally.bySource),
      byAge: add((tally) => tally.byAge),
      byRisk: add((tally) => tally.byRisk),
      byFate: add((tally) => tally.byFate),
      examples: [],
    },
    billed: sum((row) => row.billed),
    careful: sum((row) => row.careful),
    boundEvents: sum((row) => row.boundEvents),
    boundRefused: sum((row) => row.boundRefused),
    shapedEvents: sum((row) => row.shapedEvents),
    shapedRefused: sum((row) => row.shapedRefused),
    inputsKeptEvents: sum((row) => row.inputsKeptEvents),
  }
}

console.log(
  `${positionals.length} recordings, window ${values.window}, careful direct at ${values['careful-window']}, rolling marks, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
)
console.log(
  '| run | variant | sent | refused | hidden events | hidden / 100 sent | bound: fewest events (requests it cannot send) | bound with ctxgate’s edits | the same, tool inputs kept whole | req with one | class of the output | what became of it | billed-eq input | careful direct | ÷ careful direct |',
)
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|')
for (const row of [...rows, ...variants.flatMap((variant) => [total(variant.label), total(variant.label, true)])])
  console.log(`| ${cells(row).join(' | ')} |`)
