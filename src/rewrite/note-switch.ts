/** When the system note joins a conversation: at its first edit, from its first request, or held back where it would not pay. */
import type { EconomyDecision } from './economy/types.ts'
import type { ConversationMemory, SystemNoteCost } from './pipeline.ts'
import type { RewriteReport } from './types.ts'

/**
 * Whether the note is in this request. At the head it joins with the first edit (a conversation that
 * never needs editing pays nothing for it) or from the first request, and then stays; at the edit
 * point it is there whenever an edit is, right after the earliest one.
 */
export function noteGoesIn(
  note: SystemNoteCost | undefined,
  memory: ConversationMemory | undefined,
  report: RewriteReport,
): boolean {
  if (note === undefined) return false
  const edited = report.folded + report.cleared + report.droppedMessages > 0
  if (note.at === 'edit-point') return edited
  return note.from === 'first-request' || memory?.noteOn === true || edited
}

/** A first batch that also puts the note into the head rewrites from the head, not from its own edit point. */
export function noteJoinsHeadNow(note: SystemNoteCost | undefined, memory: ConversationMemory | undefined): boolean {
  return note !== undefined && note.at !== 'edit-point' && note.from !== 'first-request' && memory?.noteOn !== true
}

/**
 * The note stays out of the head when this request's economy batch was made without it (adding it
 * would not have paid), or an earlier one was and nothing since rewrites the head anyway: no cold
 * cache, no batch of the planner's own, no economy batch that pays with the note.
 */
export function noteHeldBack(
  memory: ConversationMemory | undefined,
  decision: EconomyDecision | undefined,
  report: RewriteReport,
  cold: boolean,
): boolean {
  if (memory?.noteOn === true) return false
  if (decision?.kind === 'batch' && report.newBatch) return decision.noteDeferred === true
  return memory?.noteDeferred === true && !cold && !report.newBatch
}
