import { directLabel, type ReplayOptions, type RunResult } from '../run-replay.ts'
import { combine, untilFirstRefusal, type RunSummary } from '../summarize.ts'
import { hiddenRows, type HiddenRow } from '../hidden/report.ts'
import { refetchRows, type RefetchRow } from './refetch-table.ts'
import { rowsFor, runName, type ReportRow } from './rows.ts'

export interface ReplayReport {
  readonly options: Omit<ReplayOptions, 'variants'> & { readonly variants: readonly string[] }
  readonly runs: readonly {
    readonly name: string
    readonly notes: readonly string[]
    readonly rows: readonly ReportRow[]
    /** The direct run cut at its first length refusal, where the agent would have stopped; absent when none. */
    readonly directUntilFirstRefusal?: RunSummary
  }[]
  readonly totals: readonly ReportRow[]
  /** Needed-but-hidden events per run and variant, then per variant over all runs. */
  readonly hidden: readonly HiddenRow[]
  /** Re-fetches per run and ctxgate variant, with the recording's own repeat rate. */
  readonly refetches: readonly RefetchRow[]
  /** Every run's direct requests up to its first refusal (whole runs where none was refused); absent when none. */
  readonly directUntilFirstRefusal?: RunSummary
}

/** Rows per run and in total, plus the direct runs as the agent would have lived them. */
export function buildReport(results: readonly RunResult[], options: ReplayOptions): ReplayReport {
  const labels = options.variants.map((variant) => variant.label)
  const totalSummaries = Object.fromEntries(
    labels.map((label) => [
      label,
      combine(results.map((result) => result.summaries[label]).filter((summary) => summary !== undefined)),
    ]),
  )
  const runs = results.map((result) => {
    const stopped = untilFirstRefusal(result.outcomes[directLabel] ?? [])
    return {
      name: runName(result),
      notes: result.notes,
      rows: rowsFor(runName(result), result.summaries),
      ...(stopped ? { directUntilFirstRefusal: stopped } : {}),
    }
  })
  const stoppedRuns = results.map(
    (result, index) => runs[index]?.directUntilFirstRefusal ?? result.summaries[directLabel],
  )
  const anyRefused = runs.some((run) => run.directUntilFirstRefusal)
  return {
    options: { ...options, variants: labels },
    runs,
    totals: rowsFor('all runs', totalSummaries),
    hidden: hiddenRows(results, labels),
    refetches: refetchRows(results, labels),
    ...(anyRefused ? { directUntilFirstRefusal: combine(stoppedRuns.filter((summary) => summary !== undefined)) } : {}),
  }
}
