/** Anthropic counts every cache_control, the top-level one included; a fifth is a 400 (model-apis §2.2). */
export const maxBreakpoints = 4

export type CandidateName = 'rolling' | 'previous-tail' | 'system' | 'tools'

export interface BreakpointCandidate {
  readonly name: CandidateName
  /** Position in the cache's block order (tools, then system, then message blocks). */
  readonly position: number
  /** Tokens of the prefix ending at this position. */
  readonly prefixTokens: number
}

export interface ExistingBreakpoint {
  readonly position: number
  readonly ttl: '5m' | '1h'
}

export interface BreakpointInput {
  readonly existing: readonly ExistingBreakpoint[]
  /** A top-level cache_control: it takes a slot and already marks the last block. */
  readonly automatic: boolean
  /** Its TTL: a 1-hour automatic marker sits after every candidate, so no 5-minute marker may go before it. */
  readonly automaticTtl?: '5m' | '1h'
  /** In order of value: rolling tail, previous request's tail, end of system, end of tools. */
  readonly candidates: readonly BreakpointCandidate[]
  readonly minCacheableTokens: number
}

/**
 * Which free slots to fill. The client's own markers always stay; new ones are 5-minute markers
 * and so never go before a 1-hour one (a 1h entry must come first), never on a prefix too short
 * to cache, never twice on one position.
 */
export function chooseBreakpoints(input: BreakpointInput): BreakpointCandidate[] {
  let free = maxBreakpoints - input.existing.length - (input.automatic ? 1 : 0)
  const taken = new Set(input.existing.map((marker) => marker.position))
  const lastOneHour =
    input.automatic && input.automaticTtl === '1h'
      ? Number.POSITIVE_INFINITY
      : Math.max(-1, ...input.existing.filter((marker) => marker.ttl === '1h').map((marker) => marker.position))
  const chosen: BreakpointCandidate[] = []
  for (const candidate of input.candidates) {
    if (free <= 0) break
    if (input.automatic && candidate.name === 'rolling') continue
    if (
      taken.has(candidate.position) ||
      candidate.position <= lastOneHour ||
      candidate.prefixTokens < input.minCacheableTokens
    )
      continue
    chosen.push(candidate)
    taken.add(candidate.position)
    free--
  }
  return chosen
}
