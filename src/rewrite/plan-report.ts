import type { InputReplacement } from './input-plan.ts'
import type { ReplaceToolResult, RewriteReport, ToolResultView } from './types.ts'

/** One tool result the plan folds or clears, and what that saves. */
export interface Replacement {
  readonly edit: ReplaceToolResult
  readonly result: ToolResultView
  readonly fresh: boolean
  readonly saved: number
}

/** What the plan did, as its report needs it. */
export interface PlanFacts {
  readonly estimatedBefore: number
  readonly estimatedAfter: number
  readonly budget: number
  readonly replacements: Iterable<Replacement>
  readonly isDropped: (message: number) => boolean
  /** Messages 1 up to (not including) this one are dropped. */
  readonly dropTo: number
  readonly dropFresh: boolean
  readonly messageTokens: readonly number[]
  readonly dropNoteTokens: number
  readonly clientEdited: boolean
  /** Old tool inputs cleared (input-plan.ts), re-applied and new. */
  readonly inputs?: Iterable<InputReplacement>
  readonly clearedBehindMarker: boolean
  /** Messages of the results restored on this request (each a new edit where it sits). */
  readonly restoredMessages: readonly number[]
}

/** The request's report: what was folded, cleared and dropped (kept and new), and where the first edit is. */
export function planReport(facts: PlanFacts): RewriteReport {
  const { estimatedBefore, dropTo, dropFresh } = facts
  let fold = 0
  let clear = 0
  let folded = 0
  let cleared = 0
  const fresh = { folded: 0, cleared: 0 }
  const restored = facts.restoredMessages
  let newBatch = dropFresh || restored.length > 0
  let firstEdited = Math.min(dropTo > 1 ? 1 : Number.POSITIVE_INFINITY, ...restored)
  let firstNew = Math.min(dropFresh ? 1 : Number.POSITIVE_INFINITY, ...restored)
  for (const replacement of facts.replacements) {
    const { edit, result, saved } = replacement
    if (facts.isDropped(result.message)) continue
    // A read folded to its quotable lines is a fold too (read-fold.ts).
    if (edit.action !== 'clear') {
      folded++
      fold += saved
    } else {
      cleared++
      clear += saved
    }
    if (replacement.fresh) fresh[edit.action === 'clear' ? 'cleared' : 'folded']++
    newBatch ||= replacement.fresh
    firstEdited = Math.min(firstEdited, result.message)
    if (replacement.fresh) firstNew = Math.min(firstNew, result.message)
  }
  const inputs = inputTally(facts)
  newBatch ||= inputs.fresh > 0
  firstEdited = Math.min(firstEdited, inputs.firstEdited)
  firstNew = Math.min(firstNew, inputs.firstNew)
  const dropped = dropTo - 1
  const dropTokens =
    dropped > 0
      ? facts.messageTokens.slice(1, dropTo).reduce((sum, tokens) => sum + tokens, 0) - facts.dropNoteTokens
      : 0
  return {
    estimatedBefore: Math.ceil(estimatedBefore),
    estimatedAfter: Math.ceil(facts.estimatedAfter),
    budget: Math.floor(facts.budget),
    folded,
    cleared,
    newFolded: fresh.folded,
    newCleared: fresh.cleared,
    ...(restored.length > 0 ? { restored: restored.length } : {}),
    droppedMessages: dropped,
    tokensRemoved: {
      fold,
      clear,
      drop: Math.max(0, dropTokens),
      ...(inputs.cleared > 0 ? { input: inputs.tokens } : {}),
    },
    ...(inputs.cleared > 0 ? { clearedInputs: inputs.cleared, newClearedInputs: inputs.fresh } : {}),
    newBatch,
    clientEdited: facts.clientEdited,
    firstEditedMessage: Number.isFinite(firstEdited) ? firstEdited : -1,
    firstNewEdit: Number.isFinite(firstNew) ? firstNew : -1,
    ...(facts.clearedBehindMarker ? { clearedBehindMarker: true } : {}),
  }
}

/** The old tool inputs cleared outside a dropped range: how many (new ones too), the tokens saved, the first messages. */
function inputTally(facts: PlanFacts): {
  cleared: number
  fresh: number
  tokens: number
  firstEdited: number
  firstNew: number
} {
  const tally = { cleared: 0, fresh: 0, tokens: 0, firstEdited: Infinity, firstNew: Infinity }
  for (const replacement of facts.inputs ?? []) {
    if (facts.isDropped(replacement.message)) continue
    tally.cleared++
    tally.tokens += replacement.saved
    tally.firstEdited = Math.min(tally.firstEdited, replacement.message)
    if (!replacement.fresh) continue
    tally.fresh++
    tally.firstNew = Math.min(tally.firstNew, replacement.message)
  }
  return tally
}

/** Why a request was not sent: even its newest round with the first message does not fit. */
export function tooLongMessage(estimate: number, budget: number): string {
  return `This conversation got too long for the model to read in one go: even its newest tool round with the first message needs about ${Math.ceil(estimate).toLocaleString('en-US')} tokens, more than the ${Math.floor(budget).toLocaleString('en-US')} available. Start a new conversation, or ask for less output per tool call (ctxgate did not send this request).`
}

/** The newest results (not dropped) that fit in `tokens` together, and always the newest one: a forced cut keeps them whole. */
export function newestWithin(
  results: readonly ToolResultView[],
  tokens: number,
  isDropped: (message: number) => boolean,
): Set<string> {
  const kept = new Set<string>()
  let total = 0
  for (let index = results.length - 1; index >= 0; index--) {
    const result = results[index] as ToolResultView
    if (isDropped(result.message)) break
    total += result.tokens
    if (kept.size > 0 && total > tokens) break
    kept.add(result.id)
  }
  return kept
}
