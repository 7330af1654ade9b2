import type { ConversationState } from './session-store.ts'

/** Roughly what one frozen decision costs in memory besides its strings (object, map slot, fields). */
const perDecisionOverhead = 64
/** The rest of a conversation's state: counters, tail, signature. */
const baseBytes = 256

/** An estimate of the bytes one conversation's state holds, from its decisions' ids and hashes. */
export function estimateStateBytes(state: ConversationState): number {
  let bytes = baseBytes + (state.prefixSignature?.length ?? 0)
  for (const [id, result] of Object.entries(state.decisions.results))
    bytes += id.length + result.hash.length + perDecisionOverhead
  return bytes
}

/** The same state with only its newest `keep` frozen decisions (insertion order: oldest first). */
export function keepNewestDecisions(state: ConversationState, keep: number): ConversationState {
  const entries = Object.entries(state.decisions.results)
  return {
    ...state,
    decisions: { ...state.decisions, results: Object.fromEntries(keep > 0 ? entries.slice(-keep) : []) },
  }
}
