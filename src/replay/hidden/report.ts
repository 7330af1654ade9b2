/**
 * The needed-but-hidden part of the replay report: per run and variant, and in total, with a few
 * examples under --verbose (docs/quality.md).
 */
import type { RunResult } from '../run-replay.ts'
import { runName } from '../report/rows.ts'
import { combineTallies, emptyTally, eventsPer100, shareWithEvents, type HiddenTally } from './tally.ts'
import { renderCells } from '../report/columns.ts'

export interface HiddenRow {
  readonly run: string
  readonly variant: string
  readonly tally: HiddenTally
  /** The second count: strings from the agent's own earlier tool inputs, in no tool output (own-inputs.ts). */
  readonly ownInputs: HiddenTally
}

/** Rows per run and variant, then one per variant over all runs. */
export function hiddenRows(results: readonly RunResult[], labels: readonly string[]): HiddenRow[] {
  const rows: HiddenRow[] = []
  for (const result of results)
    for (const label of labels) {
      const tally = result.hidden?.[label]
      if (tally) rows.push({ run: runName(result), variant: label, tally, ownInputs: ownOf(result, label) })
    }
  for (const label of labels) {
    const tallies = results.map((result) => result.hidden?.[label]).filter((tally) => tally !== undefined)
    const own = results.filter((result) => result.hidden?.[label]).map((result) => ownOf(result, label))
    rows.push({ run: 'all runs', variant: label, tally: combineTallies(tallies), ownInputs: combineTallies(own) })
  }
  return rows
}

/** A run without the second count (an older result) counts its sent requests with no events. */
function ownOf(result: RunResult, label: string): HiddenTally {
  return result.ownInputHidden?.[label] ?? { ...emptyTally, requests: result.hidden?.[label]?.requests ?? 0 }
}

const sourceKinds = ['read', 'edit', 'command', 'search', 'other'] as const

function sources(tally: HiddenTally): string {
  if (tally.events === 0) return '—'
  const parts = sourceKinds
    .filter((kind) => (tally.bySource[kind] ?? 0) > 0)
    .map((kind) => `${kind} ${Math.round(((tally.bySource[kind] ?? 0) / tally.events) * 100)}%`)
  const old = tally.byAge['11-20'] ?? 0
  return `${parts.join(', ')}; 11-20 rounds old ${Math.round((old / tally.events) * 100)}%`
}

const columns: readonly [string, (row: HiddenRow) => string][] = [
  ['run', (row) => row.run],
  ['variant', (row) => row.variant],
  ['requests', (row) => String(row.tally.requests)],
  ['hidden events', (row) => String(row.tally.events)],
  ['per 100 req', (row) => eventsPer100(row.tally).toFixed(1)],
  ['req with one', (row) => `${(shareWithEvents(row.tally) * 100).toFixed(1)}%`],
  ['came from', (row) => sources(row.tally)],
  ['own input hidden', (row) => String(row.ownInputs.events)],
  ['own / 100', (row) => eventsPer100(row.ownInputs).toFixed(1)],
  ['own: req with one', (row) => `${(shareWithEvents(row.ownInputs) * 100).toFixed(1)}%`],
]

export function renderHiddenTable(rows: readonly HiddenRow[], markdown: boolean): string {
  const cells = rows.map((row) => columns.map(([, cell]) => cell(row)))
  return renderCells(
    columns.map(([title]) => title),
    cells,
    markdown,
    { leftAligned: (index) => index < 2 || index === 6, trimEnd: true },
  )
}

export const hiddenNotes = [
  'needed but hidden: a distinctive string (path, identifier, hex id, long number, quoted string, code line) the agent wrote',
  'in its next message that it could only have read in an earlier tool output, and that the request as sent no longer showed.',
  "own input hidden: counted apart, a distinctive string of the next message found in one of the agent's own earlier tool inputs",
  "(an Edit's strings, a Write's content, a command) and in no tool output, that the request as sent no longer showed.",
]

/** A few examples per variant: the string, the request it was hidden in, where it came from and how the agent used it. */
export function renderExamples(rows: readonly HiddenRow[]): string {
  const lines: string[] = []
  for (const row of rows) {
    if (row.run === 'all runs') continue
    if (row.tally.examples.length > 0) {
      lines.push(`${row.run}, ${row.variant}:`)
      for (const example of row.tally.examples)
        lines.push(
          `  request ${example.request}: ${example.kind} ${JSON.stringify(example.text)} from ${example.sourceTool || 'a tool'} output ${example.age} rounds old (${example.risk ?? 'output'}, ${example.fate}), used in ${example.usedIn}`,
        )
    }
    if (row.ownInputs.examples.length > 0) {
      lines.push(`${row.run}, ${row.variant}, own input hidden:`)
      for (const example of row.ownInputs.examples)
        lines.push(
          `  request ${example.request}: ${example.kind} ${JSON.stringify(example.text)} from the agent's own ${example.sourceTool || 'tool'} input ${example.age} rounds old (${example.fate}), used in ${example.usedIn}`,
        )
    }
  }
  return lines.join('\n')
}
