/**
 * The re-fetch part of the replay report: per run and ctxgate variant, the calls the proxy counted
 * as re-fetches of results it had cleared or folded, beside how often the recorded agent repeated
 * a call anyway with its whole context (replay/refetches.ts).
 */
import type { RunResult } from '../run-replay.ts'
import { runName } from './rows.ts'
import { renderCells } from './columns.ts'

export interface RefetchRow {
  readonly run: string
  readonly variant: string
  readonly requests: number
  readonly refetches: number
  readonly tokens: number
  /** Calls in the recording repeating an earlier one within the window, whatever ctxgate did. */
  readonly baseline: number
}

export function refetchRows(results: readonly RunResult[], labels: readonly string[]): RefetchRow[] {
  const rows: RefetchRow[] = []
  for (const label of labels) {
    const mine: RefetchRow[] = []
    for (const result of results) {
      const figures = result.refetches?.[label]
      if (!figures || !result.repeats) continue
      mine.push({
        run: runName(result),
        variant: label,
        requests: result.repeats.requests,
        refetches: figures.count,
        tokens: figures.tokens,
        baseline: result.repeats.calls,
      })
    }
    if (mine.length === 0) continue
    const sum = (pick: (row: RefetchRow) => number): number => mine.reduce((total, row) => total + pick(row), 0)
    rows.push(...mine, {
      run: 'all runs',
      variant: label,
      requests: sum((row) => row.requests),
      refetches: sum((row) => row.refetches),
      tokens: sum((row) => row.tokens),
      baseline: sum((row) => row.baseline),
    })
  }
  return rows
}

const per100 = (count: number, requests: number): string =>
  requests === 0 ? '0.0' : ((count / requests) * 100).toFixed(1)

const columns: readonly [string, (row: RefetchRow) => string][] = [
  ['run', (row) => row.run],
  ['variant', (row) => row.variant],
  ['requests', (row) => String(row.requests)],
  ['re-fetches', (row) => String(row.refetches)],
  ['per 100 req', (row) => per100(row.refetches, row.requests)],
  ['re-fetched tokens', (row) => Math.round(row.tokens).toLocaleString('en-US')],
  ['agent repeats anyway, per 100 req', (row) => per100(row.baseline, row.requests)],
]

export function renderRefetchTable(rows: readonly RefetchRow[], markdown: boolean): string {
  const cells = rows.map((row) => columns.map(([, cell]) => cell(row)))
  return renderCells(
    columns.map(([title]) => title),
    cells,
    markdown,
    { leftAligned: (index) => index < 2, trimEnd: true },
  )
}

export const refetchNotes = [
  're-fetches: calls ctxgate counted (as it does live) repeating, within 20 requests, a call whose result it had cleared or',
  'folded, or reading a file it had cleared a read of. The recorded agent did not see the edits, so compare with how often',
  'it repeated a call anyway with its whole context (last column), not with zero.',
]
