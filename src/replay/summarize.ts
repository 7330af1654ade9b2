import { addUsage, billedEquivalentInput, cacheReadShare, zeroUsage, type Usage } from '../billing/usage-totals.ts'
import { deadWriteCauses, deadWritesOf, type DeadWriteCause } from '../model-call/dead-writes.ts'
import type { RequestOutcome } from './request-outcome.ts'

export interface RunSummary {
  readonly requests: number
  readonly refusedForLength: number
  /** Other failures (not length refusals). */
  readonly failed: number
  readonly largestPromptTokens: number
  readonly usage: Usage
  readonly billedEquivalentInput: number
  readonly cacheReadShare: number
  /** Requests that read less from cache than the previous request had cached: its prefix changed. */
  readonly prefixBreaks: number
  /** Prompt tokens the upstream counted for the direct run minus this run, summed over requests. */
  readonly tokensRemoved: number
  /** Requests the upstream answered (a refused or failed request bills nothing). */
  readonly served: number
  /** Billed-equivalent input per answered request: the fair comparison when one side was refused. */
  readonly billedPerServed: number
  /** Cache-write tokens no later request of the run read, by cause (model-call/dead-writes.ts). */
  readonly deadWrites: Readonly<Record<DeadWriteCause, number>>
}

export function summarize(outcomes: readonly RequestOutcome[], direct?: readonly RequestOutcome[]): RunSummary {
  let usage = zeroUsage
  let prefixBreaks = 0
  let previousCached = 0
  for (const outcome of outcomes) {
    usage = addUsage(usage, outcome.usage)
    if (outcome.status !== 200) continue
    const cachedNow =
      outcome.usage.cacheReadTokens + outcome.usage.cacheWrite5mTokens + outcome.usage.cacheWrite1hTokens
    if (previousCached > 0 && outcome.usage.cacheReadTokens < previousCached) prefixBreaks++
    previousCached = cachedNow
  }
  const tokensRemoved = direct
    ? outcomes.reduce((total, outcome, index) => total + ((direct[index]?.promptTokens ?? 0) - outcome.promptTokens), 0)
    : 0
  return {
    requests: outcomes.length,
    refusedForLength: outcomes.filter((outcome) => outcome.refusedForLength).length,
    failed: outcomes.filter((outcome) => outcome.status !== 200 && !outcome.refusedForLength).length,
    largestPromptTokens: Math.max(0, ...outcomes.map((outcome) => outcome.promptTokens)),
    usage,
    billedEquivalentInput: billedEquivalentInput(usage),
    cacheReadShare: cacheReadShare(usage),
    prefixBreaks,
    tokensRemoved,
    ...servedShare(usage, outcomes.filter((outcome) => outcome.status === 200).length),
    deadWrites: deadWritesOfRun(outcomes),
  }
}

/**
 * A replay sends its requests back to back, so nothing expires between them: a write dies when
 * the next request's prefix changed before it (a ctxgate batch, or the client's new history after
 * its compaction), or when the run ended.
 */
function deadWritesOfRun(outcomes: readonly RequestOutcome[]): Record<DeadWriteCause, number> {
  const answered = outcomes.filter((outcome) => outcome.status === 200)
  return deadWritesOf(
    answered.map((outcome, index) => {
      const newHistory = index > 0 && outcome.segment !== answered[index - 1]?.segment
      return {
        at: index,
        read: outcome.usage.cacheReadTokens,
        written5m: outcome.usage.cacheWrite5mTokens,
        written1h: outcome.usage.cacheWrite1hTokens,
        ...(outcome.ctxgateBatch ? { ctxgateBatch: true, prefixBreak: 'ctxgate_batch' as const } : {}),
        ...(newHistory ? { prefixBreak: 'client_edit' as const } : {}),
      }
    }),
  )
}

/**
 * The run as the agent would have lived it without ctxgate: it stops at the first request the
 * model refuses for length. Undefined when nothing was refused.
 */
export function untilFirstRefusal(outcomes: readonly RequestOutcome[]): RunSummary | undefined {
  const first = outcomes.findIndex((outcome) => outcome.refusedForLength)
  return first === -1 ? undefined : summarize(outcomes.slice(0, first))
}

function servedShare(usage: Usage, served: number): { served: number; billedPerServed: number } {
  return { served, billedPerServed: served === 0 ? 0 : billedEquivalentInput(usage) / served }
}

export function combine(summaries: readonly RunSummary[]): RunSummary {
  const usage = summaries.reduce((total, summary) => addUsage(total, summary.usage), zeroUsage)
  return {
    requests: sum(summaries, (summary) => summary.requests),
    refusedForLength: sum(summaries, (summary) => summary.refusedForLength),
    failed: sum(summaries, (summary) => summary.failed),
    largestPromptTokens: Math.max(0, ...summaries.map((summary) => summary.largestPromptTokens)),
    usage,
    billedEquivalentInput: billedEquivalentInput(usage),
    cacheReadShare: cacheReadShare(usage),
    prefixBreaks: sum(summaries, (summary) => summary.prefixBreaks),
    tokensRemoved: sum(summaries, (summary) => summary.tokensRemoved),
    ...servedShare(
      usage,
      sum(summaries, (summary) => summary.served),
    ),
    deadWrites: Object.fromEntries(
      deadWriteCauses.map((cause) => [cause, sum(summaries, (summary) => summary.deadWrites[cause])]),
    ) as Record<DeadWriteCause, number>,
  }
}

function sum(summaries: readonly RunSummary[], pick: (summary: RunSummary) => number): number {
  return summaries.reduce((total, summary) => total + pick(summary), 0)
}
