import type { ReplayReport } from './build-report.ts'
import { hiddenNotes, renderExamples, renderHiddenTable } from '../hidden/report.ts'
import { columnNotes, explainTotals } from './explain.ts'
import { refetchNotes, renderRefetchTable } from './refetch-table.ts'
import { renderTable } from './table.ts'

/** The terminal report: the table, what its columns mean, why totals differ, and each run's notes. */
export function renderTextReport(report: ReplayReport, verbose = false): string {
  const table = renderTable([...report.runs.flatMap((run) => run.rows), ...report.totals])
  const explanation = explainTotals(report.totals, report.directUntilFirstRefusal)
  const notes = report.runs
    .filter((run) => run.notes.length > 0)
    .flatMap((run) => [`${run.name}:`, ...run.notes.map((note) => `  - ${note}`)])
  return [
    table,
    '',
    ...columnNotes,
    ...(explanation.length > 0 ? ['', ...explanation] : []),
    '',
    renderHiddenTable(report.hidden, false),
    '',
    ...hiddenNotes,
    ...(verbose ? ['', renderExamples(report.hidden)] : []),
    ...(report.refetches.length > 0 ? ['', renderRefetchTable(report.refetches, false), '', ...refetchNotes] : []),
    ...(notes.length > 0 ? ['', 'Notes on the recordings:', ...notes] : []),
    '',
  ].join('\n')
}
