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

/**
 * The state cut as a store keeps one over `limit`: the count of its newest decisions halved until
 * the estimate fits (zero at worst). The same result as halving with `keepNewestDecisions` and
 * `estimateStateBytes`, in one pass over the decisions: a 12,000-decision state took the main
 * thread tens of milliseconds the other way.
 */
export function newestWithin(
  state: ConversationState,
  limit: number,
): { readonly state: ConversationState; readonly bytes: number; readonly kept: number; readonly total: number } {
  const entries = Object.entries(state.decisions.results)
  const base = baseBytes + (state.prefixSignature?.length ?? 0)
  // newestBytes[k]: what the newest k decisions add.
  const newestBytes = new Float64Array(entries.length + 1)
  for (let index = entries.length - 1, k = 1; index >= 0; index--, k++) {
    const [id, result] = entries[index] as [string, { readonly hash: string }]
    newestBytes[k] = (newestBytes[k - 1] ?? 0) + id.length + result.hash.length + perDecisionOverhead
  }
  let keep = entries.length
  let bytes = base + (newestBytes[keep] ?? 0)
  if (bytes <= limit) return { state, bytes, kept: keep, total: entries.length }
  while (bytes > limit && keep > 0) {
    keep = Math.floor(keep / 2)
    bytes = base + (newestBytes[keep] ?? 0)
  }
  const results = Object.fromEntries(keep > 0 ? entries.slice(-keep) : [])
  return { state: { ...state, decisions: { ...state.decisions, results } }, bytes, kept: keep, total: entries.length }
}
