import type { RunResult } from '../run-replay.ts'
import { directLabel } from '../run-replay.ts'
import type { RunSummary } from '../summarize.ts'

export interface ReportRow {
  readonly run: string
  readonly variant: string
  readonly summary: RunSummary
  /** Billed-equivalent input of this variant ÷ the direct run's (1 for direct itself). */
  readonly ratioToDirect: number | undefined
}

export function rowsFor(run: string, summaries: Readonly<Record<string, RunSummary>>): ReportRow[] {
  const direct = summaries[directLabel]
  return Object.entries(summaries).map(([variant, summary]) => ({
    run,
    variant,
    summary,
    ratioToDirect:
      direct && direct.billedEquivalentInput > 0
        ? summary.billedEquivalentInput / direct.billedEquivalentInput
        : undefined,
  }))
}

/** A short, readable name: the file without its extensions, plus the run id when a file holds several. */
export function runName(result: RunResult): string {
  const [path = result.source, index] = result.source.split('#')
  const file = (path.split('/').at(-1) ?? path).replace(/(\.agent_log_raw|\.claude|\.traj)*\.jsonl?$/, '')
  return index === undefined ? file : `${file} #${index} (${result.id})`
}
