import type { ConversationState } from './session-store.ts'

/** Roughly what one frozen decision costs in memory besides its strings (object, map slot, fields). */
const perDecisionOverhead = 64
/** The rest of a conversation's state: counters, tail, signature. */
const baseBytes = 256

/** An estimate of the bytes one conversation's state holds, from its decisions' ids and hashes. */
export function estimateStateBytes(state: ConversationState): number {
  let bytes = baseBytes + (state.prefixSignature?.length ?? 0)
  for (const [id, result] of decisionEntries(state)) bytes += id.length + result.hash.length + perDecisionOverhead
  return bytes
}

/** Frozen result decisions, then cleared inputs (input-plan.ts): both are kept, or forgotten, newest last. */
function decisionEntries(state: ConversationState): [string, { readonly hash: string }][] {
  const inputs = state.decisions.inputs
  const results = Object.entries(state.decisions.results)
  return typeof inputs === 'object' && inputs !== null ? [...results, ...Object.entries(inputs)] : results
}

/** The decisions with only the last `keep` of `decisionEntries` (cleared inputs count as the newest). */
function newestDecisions(decisions: ConversationState['decisions'], keep: number): ConversationState['decisions'] {
  const inputs =
    typeof decisions.inputs === 'object' && decisions.inputs !== null ? Object.entries(decisions.inputs) : []
  const keptInputs = Math.min(keep, inputs.length)
  const results = Object.entries(decisions.results)
  const keptResults = keep - keptInputs
  return {
    ...decisions,
    results: Object.fromEntries(keptResults > 0 ? results.slice(-keptResults) : []),
    ...(decisions.inputs !== undefined
      ? { inputs: Object.fromEntries(keptInputs > 0 ? inputs.slice(-keptInputs) : []) }
      : {}),
  }
}

/** The same state with only its newest `keep` frozen decisions (insertion order: oldest first). */
export function keepNewestDecisions(state: ConversationState, keep: number): ConversationState {
  return { ...state, decisions: newestDecisions(state.decisions, keep) }
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
  const entries = decisionEntries(state)
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
  return {
    state: { ...state, decisions: newestDecisions(state.decisions, keep) },
    bytes,
    kept: keep,
    total: entries.length,
  }
}
