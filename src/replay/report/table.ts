import type { ReportRow } from './rows.ts'
import { renderCells } from './columns.ts'

export const reportColumns: readonly [string, (row: ReportRow) => string][] = [
  ['run', (row) => row.run],
  ['variant', (row) => row.variant],
  ['requests', (row) => String(row.summary.requests)],
  ['refused', (row) => String(row.summary.refusedForLength)],
  ['largest', (row) => thousands(row.summary.largestPromptTokens)],
  ['input', (row) => thousands(row.summary.usage.inputTokens)],
  ['cache write', (row) => thousands(row.summary.usage.cacheWrite5mTokens + row.summary.usage.cacheWrite1hTokens)],
  ['cache read', (row) => thousands(row.summary.usage.cacheReadTokens)],
  ['billed-eq input', (row) => thousands(Math.round(row.summary.billedEquivalentInput))],
  ['per served', (row) => thousands(row.summary.billedPerServed)],
  ['read share', (row) => `${(row.summary.cacheReadShare * 100).toFixed(1)}%`],
  ['prefix breaks', (row) => String(row.summary.prefixBreaks)],
  [
    'dead writes',
    (row) => thousands(Object.values(row.summary.deadWrites).reduce((total, tokens) => total + tokens, 0)),
  ],
  // Per request: the sum over a run's requests exceeds its input, since every request resends the history.
  [
    'removed/req',
    (row) => (row.summary.requests === 0 ? '0' : thousands(row.summary.tokensRemoved / row.summary.requests)),
  ],
  ['÷ direct', (row) => (row.ratioToDirect === undefined ? '—' : row.ratioToDirect.toFixed(3))],
]

/** A plain-text table, one row per run and variant, for the terminal. */
export function renderTable(rows: readonly ReportRow[]): string {
  const cells = rows.map((row) => reportColumns.map(([, cell]) => cell(row)))
  return renderCells(
    reportColumns.map(([title]) => title),
    cells,
    false,
    { leftAligned: (index) => index < 2 },
  )
}

/** The same table in Markdown, for BENCHMARKS.md. */
export function renderMarkdownTable(rows: readonly ReportRow[]): string {
  const cells = rows.map((row) => reportColumns.map(([, cell]) => cell(row)))
  return renderCells(
    reportColumns.map(([title]) => title),
    cells,
    true,
    { leftAligned: (index) => index < 2 },
  )
}

export function thousands(value: number): string {
  return Math.round(value).toLocaleString('en-US')
}
