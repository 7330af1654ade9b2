import { holdsNoDecision } from './nothing-to-plan.ts'
import type { ConversationMemory } from './pipeline-types.ts'
import { messagesTokens } from './prompt-tokens.ts'
import { noDecisions, type ChatView } from './types.ts'

/**
 * Room the check below keeps for the system note, whether or not it is on: far more than the note
 * costs wherever an adapter writes it (test/unit/nothing-to-decide checks each adapter's measure).
 */
export const noteRoomTokens = 1_024

/** What the check reads: the request, its conversation's memory, and bounds on what the plan would size it with. */
export interface UndecidedRequest {
  readonly view: ChatView
  readonly memory: ConversationMemory | undefined
  /** The budget the plan would use (pipeline.ts `effectiveBudget`). */
  readonly budget: number
  /** No calibration factor the plan could use is larger (calibration.ts `factorCeiling`). */
  readonly factorCeiling: number
  /** Where the system note would go; undefined when it is off. */
  readonly note: { readonly at: 'head' | 'edit-point'; readonly from: 'first-edit' | 'first-request' } | undefined
  /** The model's minimum cacheable prompt (a breakpoint on a shorter prefix caches nothing). */
  readonly minCacheableTokens: number
}

/**
 * A request whose plan can only be "send it as the client wrote it", found without planning it:
 * its conversation has nothing frozen, no note and no marker promised; it carries no tool call or
 * result (nothing a batch, a clear or a marker could start at); the note cannot join on a first
 * request; it is shorter than the model's minimum cacheable prompt (no breakpoint to place); and,
 * with the note's room, under budget at any factor the plan could use. The hook sends such a
 * request first and plans it after dispatch, for its records (test/property/records-after-dispatch,
 * test/unit/nothing-to-decide).
 * False whenever the plan could do anything, or the check cannot tell.
 */
export function nothingToDecide(request: UndecidedRequest): boolean {
  const { view, memory, note } = request
  if (memory !== undefined) {
    if (memory.noteOn === true || memory.nextEditResult !== undefined) return false
    if (!holdsNoDecision(memory.decisions ?? noDecisions)) return false
  }
  if (note !== undefined && note.from === 'first-request') return false
  for (const message of view.messages)
    if (message.toolResults.length > 0 || message.toolCallIds.length > 0) return false
  const tokens = view.headTokens + messagesTokens(view.messages)
  if (!(tokens < request.minCacheableTokens)) return false
  return (tokens + noteRoomTokens) * request.factorCeiling <= request.budget
}
