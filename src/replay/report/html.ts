import type { RequestOutcome } from '../request-outcome.ts'
import type { RunResult } from '../run-replay.ts'
import { rowsFor, runName, type ReportRow } from './rows.ts'
import { reportColumns, thousands } from './table.ts'

const colours = { read: '#3b82f6', write: '#f59e0b', input: '#9ca3af', refused: '#dc2626' } as const

/** A self-contained page: the totals table and, per run, stacked prompt tokens per request for each variant. */
export function renderHtml(results: readonly RunResult[], totals: readonly ReportRow[], title: string): string {
  const sections = results.map((result) => runSection(result)).join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111}
table{border-collapse:collapse;margin:8px 0 24px}th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
figure{margin:0 0 16px}figcaption{font-weight:600;margin-bottom:4px}
</style></head><body>
<h1>${escape(title)}</h1>
<p class="legend">Prompt tokens per request:<span style="background:${colours.read}"></span>cache read<span style="background:${colours.write}"></span>cache write<span style="background:${colours.input}"></span>uncached<span style="background:${colours.refused}"></span>refused for length</p>
<h2>Totals</h2>
${tableHtml(totals)}
${sections}
</body></html>
`
}

function runSection(result: RunResult): string {
  const name = runName(result)
  const largest = Math.max(
    1,
    ...Object.values(result.outcomes).flatMap((list) => list.map((outcome) => outcome.promptTokens)),
  )
  const charts = Object.entries(result.outcomes)
    .map(
      ([variant, outcomes]) =>
        `<figure><figcaption>${escape(variant)}</figcaption>${chart(outcomes, largest, `${name} — ${variant}`)}</figure>`,
    )
    .join('\n')
  const notes = result.notes.length > 0 ? `<p><small>${result.notes.map(escape).join(' · ')}</small></p>` : ''
  return `<section><h2>${escape(name)}</h2>${notes}${tableHtml(rowsFor(name, result.summaries))}${charts}</section>`
}

/** Stacked bars, one per request, on a shared vertical scale so variants compare at a glance. */
export function chart(outcomes: readonly RequestOutcome[], largest: number, label: string): string {
  const width = 900
  const height = 220
  const left = 64
  const bottom = 20
  const plotHeight = height - bottom - 8
  const step = (width - left - 8) / Math.max(1, outcomes.length)
  const barWidth = Math.max(1, step * 0.8)
  const y = (tokens: number): number => (tokens / largest) * plotHeight
  const bars = outcomes
    .map((outcome, index) => {
      const x = (left + index * step).toFixed(1)
      const attributes = `data-request="${outcome.index}"`
      if (outcome.refusedForLength) {
        const h = y(outcome.promptTokens)
        return `<rect class="bar-refused" ${attributes} x="${x}" y="${(height - bottom - h).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${h.toFixed(1)}" fill="${colours.refused}"><title>request ${outcome.index}: refused, ${thousands(outcome.promptTokens)} tokens</title></rect>`
      }
      const parts: [keyof typeof colours, number][] = [
        ['read', outcome.usage.cacheReadTokens],
        ['write', outcome.usage.cacheWrite5mTokens + outcome.usage.cacheWrite1hTokens],
        ['input', outcome.usage.inputTokens],
      ]
      let base = height - bottom
      return parts
        .map(([kind, tokens]) => {
          const h = y(tokens)
          base -= h
          return `<rect class="bar-${kind}" ${attributes} x="${x}" y="${base.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${h.toFixed(1)}" fill="${colours[kind]}"><title>request ${outcome.index}: ${kind} ${thousands(tokens)}</title></rect>`
        })
        .join('')
    })
    .join('')
  const axis = `<line x1="${left}" y1="${height - bottom}" x2="${width - 8}" y2="${height - bottom}" stroke="#555"/><text x="${left - 6}" y="14" text-anchor="end" font-size="11">${thousands(largest)}</text><text x="${left - 6}" y="${height - bottom}" text-anchor="end" font-size="11">0</text><text x="${left}" y="${height - 4}" font-size="11">request 1</text><text x="${width - 8}" y="${height - 4}" text-anchor="end" font-size="11">request ${outcomes.length}</text>`
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escape(label)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${axis}${bars}</svg>`
}

function tableHtml(rows: readonly ReportRow[]): string {
  const head = reportColumns.map(([title]) => `<th>${escape(title)}</th>`).join('')
  const body = rows
    .map((row) => `<tr>${reportColumns.map(([, cell]) => `<td>${escape(cell(row))}</td>`).join('')}</tr>`)
    .join('')
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
