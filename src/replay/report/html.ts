import { pageAssets } from '../../live/page-assets.ts'
import type { RequestOutcome } from '../request-outcome.ts'
import type { RunResult } from '../run-replay.ts'
import { rowsFor, runName, type ReportRow } from './rows.ts'
import { reportColumns } from './table.ts'

/** One bar of a replay chart, in the shape the shared token chart draws. */
export interface ChartRow {
  readonly n: number
  readonly read: number
  readonly write: number
  readonly uncached: number
  readonly refused: number
  readonly window?: number
}

/** The data one chart is drawn from, embedded in the page as JSON. */
export interface ChartData {
  readonly title: string
  readonly yMax: number
  readonly rows: readonly ChartRow[]
}

/**
 * A self-contained page (uPlot and the live page's chart code inlined, nothing fetched): the totals
 * table and, per run, prompt tokens per request for each variant on one shared scale.
 */
export function renderHtml(
  results: readonly RunResult[],
  totals: readonly ReportRow[],
  title: string,
  window?: number,
): string {
  const assets = pageAssets()
  let chartCount = 0
  const sections = results.map((result) => runSection(result, window, () => `chart-${chartCount++}`)).join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>${assets['uplot.css'].body}
${assets['live-page.css'].body}
main{max-width:1200px}th:nth-child(3),td:nth-child(3){text-align:right}figure{margin:0 0 16px}figcaption{font-weight:600;margin:6px 0 4px}.chart{min-height:240px}
</style></head><body>
<header><h1>${escape(title)}</h1></header>
<main>
${legend}
<h2>Totals</h2>
${tableHtml(totals)}
${sections}
${footnote}
</main>
${inlineScript(assets['uplot.js'].body)}
${inlineScript(assets['token-chart.js'].body)}
${inlineScript(drawCharts)}
</body></html>
`
}

const legend = `<p class="notes"><b>billed-eq input</b>: billed-equivalent input tokens, uncached input + 1.25 × 5-minute cache writes + 2 × 1-hour cache writes + 0.1 × cache reads — one number that prices a prompt the way the provider bills it.
<b>÷ direct</b>: this variant's billed-equivalent input divided by the same run sent straight to the upstream (below 1 is cheaper; see †).
Charts: prompt tokens per request as the upstream counted them, stacked cache read / cache write / uncached; red bars are requests refused for length (drawn at the size the upstream reported); the dotted line is the model's window. Hover a chart for each request's numbers.</p>`

const footnote = `<p class="notes"><small>† A request the upstream refuses for length bills nothing, while ctxgate serves every request. A direct run with refusals can therefore look cheaper than ctxgate's: it stopped paying at the requests it could not make. Compare the refused column before the ÷ direct one.</small></p>`

/** Reads each embedded data block and draws it with the shared token chart. */
const drawCharts = `document.querySelectorAll('[data-chart]').forEach(function (container) {
  var data = JSON.parse(document.getElementById(container.dataset.chart).textContent)
  window.ctxgateTokenChart(container, { height: 240, yMax: data.yMax, refusedLabel: 'refused for length' }).setRows(data.rows)
})`

function runSection(result: RunResult, window: number | undefined, nextId: () => string): string {
  const name = runName(result)
  const largest = Math.max(
    1,
    window ?? 0,
    ...Object.values(result.outcomes).flatMap((list) => list.map((outcome) => outcome.promptTokens)),
  )
  const charts = Object.entries(result.outcomes)
    .map(([variant, outcomes]) => {
      const id = nextId()
      const data: ChartData = { title: `${name} — ${variant}`, yMax: largest, rows: chartRows(outcomes, window) }
      return `<figure><figcaption>${escape(variant)}</figcaption><div class="chart" data-chart="${id}" role="img" aria-label="${escape(data.title)}"></div><script type="application/json" id="${id}">${jsonForHtml(data)}</script></figure>`
    })
    .join('\n')
  const notes = result.notes.length > 0 ? `<p><small>${result.notes.map(escape).join(' · ')}</small></p>` : ''
  return `<section><h2>${escape(name)}</h2>${notes}${tableHtml(rowsFor(name, result.summaries))}${charts}</section>`
}

/** One row per request: what the upstream billed, or the refused size. */
export function chartRows(outcomes: readonly RequestOutcome[], window: number | undefined): ChartRow[] {
  return outcomes.map((outcome, index) => ({
    n: index + 1,
    read: outcome.usage.cacheReadTokens,
    write: outcome.usage.cacheWrite5mTokens + outcome.usage.cacheWrite1hTokens,
    uncached: outcome.usage.inputTokens,
    refused: outcome.refusedForLength ? outcome.promptTokens : 0,
    ...(window === undefined ? {} : { window }),
  }))
}

function tableHtml(rows: readonly ReportRow[]): string {
  const head = reportColumns.map(([title]) => `<th>${escape(title)}</th>`).join('')
  const body = rows
    .map((row) => `<tr>${reportColumns.map(([, cell]) => `<td>${escape(cell(row))}</td>`).join('')}</tr>`)
    .join('')
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`
}

/** JSON that cannot end its script element early. */
function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c')
}

function inlineScript(code: string): string {
  return `<script>${code.replace(/<\/script/gi, '<\\/script')}</script>`
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
