import type { ConversationState } from './session-store.ts'

/**
 * Which of a conversation's states to plan with: the one read from the shared store, unless this
 * replica's own copy is further along (its last write there did not land) or the shared one is not
 * a state at all. Further along: more requests, else seen later; the shared one on a tie.
 */
export function newerState(shared: unknown, local: ConversationState | undefined): ConversationState | undefined {
  if (local === undefined) return shared as ConversationState | undefined
  if (!isStateShaped(shared)) return local
  if (local.requests !== shared.requests) return local.requests > shared.requests ? local : shared
  return local.lastSeen > shared.lastSeen ? local : shared
}

function isStateShaped(value: unknown): value is ConversationState {
  const state = value as Partial<ConversationState> | null | undefined
  return (
    typeof state === 'object' &&
    state !== null &&
    typeof state.requests === 'number' &&
    typeof state.decisions === 'object'
  )
}
