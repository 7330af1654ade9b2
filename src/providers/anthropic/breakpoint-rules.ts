/** Anthropic counts every cache_control, the top-level one included; a fifth is a 400 (https://platform.claude.com/docs/en/build-with-claude/prompt-caching). */
export const maxBreakpoints = 4

/** A read walks back at most 20 positions from each marker, the marker itself first (https://platform.claude.com/docs/en/build-with-claude/prompt-caching). */
export const lookbackPositions = 20

export type CandidateName = 'rolling' | 'previous-tail' | 'next-edit' | 'system' | 'tools'

/** A marker at `marker` finds an entry written at `entry` by walking back. */
export function withinLookback(entry: number, marker: number): boolean {
  return marker >= entry && marker - entry < lookbackPositions
}

export interface BreakpointCandidate {
  readonly name: CandidateName
  /** Position in the cache's block order (tools, then system, then message blocks). */
  readonly position: number
  /** Tokens of the prefix ending at this position. */
  readonly prefixTokens: number
  /** A one-hour marker (the stable head, when pauses make it pay); otherwise five minutes. */
  readonly ttl?: '1h'
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
  /** In order of value: rolling tail, previous request's tail, ahead of the next batch's edit, end of system, end of tools. */
  readonly candidates: readonly BreakpointCandidate[]
  readonly minCacheableTokens: number
}

/**
 * Which free slots to fill. The client's own markers always stay; new ones keep the required TTL
 * order (a 1h entry before every 5m one, the client's included), never go on a prefix too short to
 * cache, never twice on one position.
 */
export function chooseBreakpoints(input: BreakpointInput): BreakpointCandidate[] {
  let free = maxBreakpoints - input.existing.length - (input.automatic ? 1 : 0)
  const taken = new Set(input.existing.map((marker) => marker.position))
  const placed: ExistingBreakpoint[] = [...input.existing]
  // The top-level marker sits on the last block, after every candidate.
  if (input.automatic) placed.push({ position: Number.POSITIVE_INFINITY, ttl: input.automaticTtl ?? '5m' })
  const chosen: BreakpointCandidate[] = []
  for (const candidate of input.candidates) {
    if (free <= 0) break
    if (input.automatic && candidate.name === 'rolling') continue
    if (
      taken.has(candidate.position) ||
      !keepsTtlOrder(placed, candidate) ||
      candidate.prefixTokens < input.minCacheableTokens
    )
      continue
    chosen.push(candidate)
    taken.add(candidate.position)
    placed.push({ position: candidate.position, ttl: candidate.ttl ?? '5m' })
    free--
  }
  return chosen
}

/** A 5m marker never before a 1h one, and a 1h marker never after a 5m one. */
function keepsTtlOrder(placed: readonly ExistingBreakpoint[], candidate: BreakpointCandidate): boolean {
  return candidate.ttl === '1h'
    ? placed.every((marker) => marker.ttl === '1h' || marker.position > candidate.position)
    : placed.every((marker) => marker.ttl === '5m' || marker.position < candidate.position)
}
