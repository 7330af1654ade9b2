import { directLabel } from '../run-replay.ts'
import type { RunSummary } from '../summarize.ts'
import type { ReportRow } from './rows.ts'
import { thousands } from './table.ts'

/** What the columns mean, printed under every text table. */
export const columnNotes = [
  'refused: requests the model rejects for length. billed-eq input: input + 1.25 x 5-minute cache write + 2 x 1-hour write + 0.1 x cache read.',
  'per served: billed-eq input / requests the model answered. removed/req: prompt tokens ctxgate took out of each request, on average',
  '(summed over a run it exceeds the run’s input, because every request resends the history; --json has the sum as tokensRemoved).',
  'dead writes: cache-write tokens no later request read (--json has them by cause as deadWrites; see docs/dead-writes.md).',
]

/**
 * Why ctxgate can bill more in total than direct (a refused request bills nothing, while ctxgate
 * serves every one), and the two fair comparisons: per answered request, and direct as the agent
 * would have lived it, stopped at its first refusal.
 */
export function explainTotals(totals: readonly ReportRow[], directUntilRefused: RunSummary | undefined): string[] {
  const direct = totals.find((row) => row.variant === directLabel)?.summary
  if (!direct || direct.refusedForLength === 0) return []
  const lines = [
    `Direct had ${direct.refusedForLength} of ${direct.requests} requests refused for length. A refused request bills nothing, so direct's`,
    'total covers only what it could serve, while ctxgate served every request: compare per served request instead.',
  ]
  for (const row of totals) {
    if (row.variant === directLabel) continue
    const ratio = direct.billedPerServed > 0 ? row.summary.billedPerServed / direct.billedPerServed : undefined
    lines.push(
      `  per served request: direct ${thousands(direct.billedPerServed)}, ${row.variant} ${thousands(row.summary.billedPerServed)}` +
        (ratio === undefined ? '' : ` (÷ direct ${ratio.toFixed(3)})`) +
        `; ${row.variant} served ${row.summary.served} of ${row.summary.requests}.`,
    )
  }
  if (directUntilRefused)
    lines.push(
      `  Stopped at its first refusal, as an agent would, direct serves ${directUntilRefused.served} of ${direct.requests} requests` +
        ` and bills ${thousands(directUntilRefused.billedEquivalentInput)}; the rest of the run never happens without ctxgate.`,
    )
  return lines
}
