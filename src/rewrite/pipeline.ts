import { isCold } from './economy/cache-timing.ts'
import { decideForRequest, type EconomySettings } from './economy/request-decision.ts'
import { belowFloor } from './economy/decide.ts'
import type { EconomyDecision } from './economy/types.ts'
import { realizationOf as ledgerRealization, type LedgerEntry } from './economy/ledger.ts'
import { editableFromMarker, nextEditOf, promiseSpent, readMarkerOf } from './marker-promise.ts'
import { noteGoesIn, noteHeldBack, noteJoinsHeadNow } from './note-switch.ts'
import { finishRewrite } from './finish-rewrite.ts'
import { planRewrite } from './plan.ts'
import { tailWithin } from './prompt-tokens.ts'
import { noDecisions, type FrozenDecisions, type RewriteOutcome, type RewriteReport } from './types.ts'
import type {
  ConversationMemory,
  DecidedRewrite,
  PipelineInput,
  PipelineOutcome,
  RequestLimits,
} from './pipeline-types.ts'

export { finishRewrite } from './finish-rewrite.ts'
export type {
  ConversationMemory,
  DecidedRewrite,
  NextMemory,
  PipelineInput,
  PipelineOutcome,
  RequestLimits,
  SystemNoteCost,
} from './pipeline-types.ts'

/**
 * Below budget, a result is restored on use only within this many tokens of the conversation's end
 * (or on a cold cache, or behind a batch's edit point): a restore writes everything after it again.
 * Measured on the long replay set (BENCHMARKS.md, "Needed but hidden"): 13.6 → 10.9 events per 100
 * requests at 0.867× → 0.885× careful direct; 10k restored nothing, 30k the same as 20k.
 */
const restoreReachTokens = 20_000

/** Share of a limit the upstream named that ctxgate plans to: its count and ours differ a little. */
const learnedLimitMargin = 0.97

/**
 * One request's rewrite, pure: the budget, the note's room in it, the plan (frozen decisions first,
 * then a batch when over), whether the note is on, whether the cache prefix broke and why, and what
 * to remember for the next request. The same as `finishRewrite(decideRewrite(input))`.
 */
export function runPipeline(input: PipelineInput): PipelineOutcome {
  return finishRewrite(decideRewrite(input))
}

/**
 * The part of a request's rewrite that says what is sent: the plan, the note, the previous tail and
 * the markers asked for. What only the records read (the head's TTL, the ledger, the prefix
 * signatures, re-fetches, the next memory) is left to `finishRewrite`, so a request sent as the
 * client wrote it can be sent before they are computed (docs/proxy.md, "Records after dispatch").
 */
export function decideRewrite(input: PipelineInput): DecidedRewrite {
  const { memory, note } = input
  const budget = effectiveBudget(input.limits, input.view.maxOutputTokens)
  // Counted whether or not the note goes in yet, so turning it on never breaks the budget.
  const noteTokens = note?.tokens ?? 0
  const gapMs = gapSince(memory?.lastSeen, input.now)
  const editableFrom = editableFromMarker(input, gapMs)
  const { planned, decision } = planWithEconomy(input, { budget, noteTokens, gapMs, editableFrom })
  const report = planned.report
  if (planned.kind === 'too-long') return { kind: 'too-long', report, message: planned.message }
  const cold = isCold(gapMs, '5m')
  const noteHeld = noteHeldBack(memory, decision, report, cold)
  const noteOn = noteGoesIn(note, memory, report) && !noteHeld
  const marker = nextEditOf(input, input.memory?.decisions ?? noDecisions, gapMs)
  const following = report.newBatch
    ? followingEditOf(input, planned.decisions, decision, report, cold ? 0 : (editableFrom ?? 0))
    : undefined
  return {
    kind: 'rewritten',
    edits: planned.edits,
    report,
    noteOn,
    previousTail: tailStale(report, memory) ? undefined : memory?.previousTail,
    nextEditResult: readMarkerOf(input, marker, report),
    followingEditResult: following,
    planning: { input, decisions: planned.decisions, decision, gapMs, cold, noteTokens, noteHeld, marker },
  }
}

/** A new cut, or a batch that edits before the previous tail, changed what follows it: a marker there would find nothing. */
function tailStale(report: RewriteReport, memory: ConversationMemory | undefined): boolean {
  if (!report.newBatch) return false
  return report.droppedMessages > 0 || report.firstEditedMessage <= (memory?.previousTail ?? -1)
}

/**
 * Where the batch after this request's will start. An over-budget cut starts wherever the clearing
 * order must reach; after a below-budget batch, where the economy will (marker-promise.ts), among
 * the blocks this request writes fresh: from the entry it read (`writtenFrom`, the marker kept, or
 * the head), not only from its first edit. A result the batch kept whole between the two (the
 * newest read of a file) stays within the next batch's reach once a later read supersedes it.
 */
function followingEditOf(
  input: PipelineInput,
  decisions: FrozenDecisions,
  decision: EconomyDecision | undefined,
  report: RewriteReport,
  writtenFrom: number,
): string | undefined {
  const afterBatchAt = decision?.kind === 'batch' ? Math.min(report.firstNewEdit, writtenFrom) : undefined
  return nextEditOf(input, decisions, undefined, afterBatchAt)
}

interface Sizes {
  readonly budget: number
  readonly noteTokens: number
  readonly gapMs: number | undefined
  readonly editableFrom: number | undefined
}

/**
 * Today's plan first (frozen decisions, then the budget's hard limit). Only when that makes no new
 * batch is the economy asked, and only past its cheap checks (short session, start point), so a
 * request it cannot edit costs no path pricing; a batch it decides is planned again, frozen.
 */
function planWithEconomy(
  input: PipelineInput,
  sizes: Sizes,
): { readonly planned: RewriteOutcome; readonly decision: EconomyDecision | undefined } {
  const cold = isCold(sizes.gapMs, '5m')
  const cheapFrom = tailWithin(input.view, restoreReachTokens / input.factor)
  const plan = (batch?: readonly string[], editPoint?: number): RewriteOutcome =>
    planRewrite({
      // Not `{ ...view, headTokens }`: on Node 20 that gives every request's view its own hidden class.
      view: Object.assign({}, input.view, { headTokens: input.view.headTokens + sizes.noteTokens }),
      decisions: input.memory?.decisions ?? noDecisions,
      budget: sizes.budget,
      policy: input.policy,
      factor: input.factor,
      estimator: input.estimator,
      dropNoteFraming: input.dropNoteFraming,
      ...(batch ? { batch } : {}),
      ...(sizes.editableFrom !== undefined ? { editableFrom: sizes.editableFrom } : {}),
      request: (input.memory?.requests ?? 0) + 1,
      // Below budget a restore rewrites little: a cold cache, the batch's own rewrite, or the last 20k tokens.
      restoreBelowBudgetFrom: cold ? 0 : Math.min(editPoint ?? Number.POSITIVE_INFINITY, cheapFrom),
    })
  const planned = plan()
  const settings = input.economy
  // The provider manages a server-managed conversation's context itself: ctxgate makes no content edits to it.
  if (!settings || input.view.serverManaged === true || planned.kind === 'too-long' || planned.report.newBatch)
    return { planned, decision: undefined }
  const decision = economyDecision(input, settings, sizes, planned.report.estimatedBefore)
  return decision?.kind === 'batch'
    ? { planned: plan(decision.ids, decision.editPoint), decision }
    : { planned, decision }
}

function economyDecision(
  input: PipelineInput,
  settings: EconomySettings,
  sizes: Sizes,
  sentByClient: number,
): EconomyDecision | undefined {
  const requestsSoFar = (input.memory?.requests ?? 0) + 1
  const counted = (sentByClient / input.factor) * (input.countFactor ?? input.factor)
  const floor = belowFloor(requestsSoFar, counted, settings.policy)
  if (floor) return floor
  if (promiseSpent(input, sizes.gapMs)) return { kind: 'none', reason: 'marker_moving' }
  return decideForRequest({
    settings,
    view: input.view,
    decisions: input.memory?.decisions ?? noDecisions,
    memory: input.memory?.economy,
    requestsSoFar,
    ...(input.finishedLengths ? { finishedLengths: input.finishedLengths } : {}),
    msSinceLastRequest: sizes.gapMs,
    budget: sizes.budget,
    factor: input.factor,
    ...(input.countFactor !== undefined ? { countFactor: input.countFactor } : {}),
    estimator: input.estimator,
    extraHeadTokens: sizes.noteTokens,
    noteSwitchesOn: noteJoinsHeadNow(input.note, input.memory),
    ...realizationOf(input.memory?.ledger),
    ...(sizes.editableFrom !== undefined ? { editableFrom: sizes.editableFrom } : {}),
    // Warm and no marker kept: no entry is known past the head, so the batch is priced as rewriting from it.
    ...(isCold(sizes.gapMs, '5m') ? {} : { markerAt: sizes.editableFrom ?? 0 }),
  })
}

/** What the session's earlier batches really saved per request over what was predicted, when the ledger can tell. */
function realizationOf(ledger: readonly LedgerEntry[] | undefined): { realization?: number } {
  const realization = ledgerRealization(ledger)
  return realization === undefined ? {} : { realization }
}

/** Time since the previous request; unknown on a first request, or when replicas' clocks disagree (negative). */
function gapSince(lastSeen: number | undefined, now: number | undefined): number | undefined {
  if (typeof lastSeen !== 'number' || now === undefined || now < lastSeen) return undefined
  return now - lastSeen
}

/** Once the upstream has named its real limit, it wins over configuration (a window set too large). */
export function effectiveBudget(limits: RequestLimits, maxOutputTokens: number): number {
  return limits.learnedLimit === undefined
    ? limits.budget
    : Math.min(limits.budget, limits.learnedLimit * learnedLimitMargin - maxOutputTokens)
}
