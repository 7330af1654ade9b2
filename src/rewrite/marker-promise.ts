/**
 * The cache marker a batch relies on, as a promise between requests: which result the previous
 * request kept its marker ahead of, whether that still holds, and where this request's goes.
 */
import { isCold } from './economy/cache-timing.ts'
import { cadenceHistory } from './economy/cadence-memory.ts'
import { nextEditResult } from './next-edit.ts'
import { clearedNote } from './notes.ts'
import type { NextMemory, PipelineInput } from './pipeline.ts'
import { noDecisions, type FrozenDecisions, type RewriteReport } from './types.ts'

/**
 * Where the previous request kept its cache marker (the message of that result): new edits start
 * there or later. No such promise when the cache went cold (everything is written again anyway), or
 * when the result is gone. A first batch that would add the note is held too: it may go without it.
 */
export function editableFromMarker(input: PipelineInput, gapMs: number | undefined): number | undefined {
  const id = input.memory?.nextEditResult
  if (id === undefined || isCold(gapMs, '5m')) return undefined
  const index = input.view.messages.findIndex((message) => message.toolResults.some((result) => result.id === id))
  return index >= 0 ? index : undefined
}

/** The result the previous request kept its marker ahead of is already edited: its entry no longer helps a batch now. */
export function promiseSpent(input: PipelineInput, gapMs: number | undefined): boolean {
  const id = input.memory?.nextEditResult
  const results = (input.memory?.decisions ?? noDecisions).results as Readonly<Record<string, unknown>>
  return (
    id !== undefined && !isCold(gapMs, '5m') && Object.hasOwn(results, id) && input.memory?.nextEditCleared !== true
  )
}

/**
 * The promise as the adapter wrote it. With one free marker slot it may write the next batch's entry
 * ahead of an earlier result than the plan asked, within the lookback of the entry it read (a bridge:
 * docs/economy.md, "One free slot: a bridge"); that result may be one this batch cleared. With none
 * free (`null`, the client's own markers fill every slot) no marker can read an entry there, and the
 * next batch is priced as rewriting from the head.
 */
export function promiseWritten(next: NextMemory, written: string | null | undefined): NextMemory {
  if (written === undefined || written === next.nextEditResult) return next
  const { nextEditCleared: _previous, nextEditResult: _asked, ...rest } = next
  if (written === null) return rest
  const cleared = Object.hasOwn(next.decisions.results, written)
  return { ...rest, nextEditResult: written, ...(cleared ? { nextEditCleared: true } : {}) }
}

/**
 * The result a cache marker goes just ahead of. The one the previous request kept stays while it is
 * still sent whole and the cache is warm: its entry was written when that block was fresh (under the
 * strict cache-write reading a marker inside what was read writes nothing, docs/economy.md). Otherwise
 * the oldest result a batch would start at, after `decisions`.
 */
export function nextEditOf(
  input: PipelineInput,
  decisions: FrozenDecisions,
  gapMs: number | undefined,
  afterBatchAt?: number,
): string | undefined {
  const kept = input.memory?.nextEditResult
  const results = decisions.results as Readonly<Record<string, unknown>>
  if (
    kept !== undefined &&
    gapMs !== undefined &&
    !isCold(gapMs, '5m') &&
    (!Object.hasOwn(results, kept) || input.memory?.nextEditCleared === true) &&
    input.view.messages.some((message) => message.toolResults.some((result) => result.id === kept))
  )
    return kept
  return nextEditResult({
    view: input.view,
    decisions,
    replacementTokens: input.estimator.text(clearedNote),
    // Eager folding edits, below budget, only outputs large enough to fold: the next edit is the next of those.
    ...(input.policy.strategy === 'eager-fold' ? { minTokens: input.policy.foldMinTokens } : {}),
    excludeTools: input.economy?.policy.excludeTools ?? [],
    ...(input.reachBack ? { prices: input.reachBack } : {}),
    // After a batch only the blocks it wrote again are fresh, and a marker inside what was read may write no
    // entry (the strict cache-write reading, docs/economy.md): the marker goes ahead of the oldest result
    // there that a later batch may take once its need hazard has fallen with age. Before any batch, ahead of
    // the oldest one a batch may take within the payback horizon: a marker placed past a result kept whole
    // while young (the newest run of a test) would leave it whole for good.
    ...(afterBatchAt !== undefined
      ? { fromMessage: afterBatchAt, eventually: true }
      : { eventually: true, lookAhead: input.economy?.policy.maxPaybackRequests ?? cadenceHistory }),
  })
}

/**
 * The marker for this request's own read: a new edit before the kept marker leaves that marker's entry
 * nothing to match, so it goes just ahead of the first edit, whose lookback finds the entry before it.
 */
export function readMarkerOf(
  input: PipelineInput,
  kept: string | undefined,
  report: RewriteReport,
): string | undefined {
  if (!report.newBatch || report.firstNewEdit < 0 || report.droppedMessages > 0 || kept === undefined) return kept
  const messages = input.view.messages
  const keptAt = messages.findIndex((message) => message.toolResults.some((result) => result.id === kept))
  if (keptAt < 0 || report.firstNewEdit >= keptAt) return kept
  return messages[report.firstNewEdit]?.toolResults[0]?.id ?? kept
}
