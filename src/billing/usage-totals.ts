import { addTokenCounts, promptTokensOf, zeroUsage, type Usage } from '../model-call/usage.ts'
import { defaultMultipliers, billedInputTokens } from './prices.ts'

export { zeroUsage, type Usage }

/** Input tokens as if every one were billed at the uncached price, at Anthropic's published multipliers (5-minute write 1.25×, 1-hour write 2×, read 0.1×). */
export function billedEquivalentInput(usage: Usage): number {
  return billedInputTokens(usage, defaultMultipliers)
}

/** Share of prompt tokens read from cache (0 when nothing was sent). */
export function cacheReadShare(usage: Usage): number {
  const total = promptTokensOf(usage)
  return total === 0 ? 0 : usage.cacheReadTokens / total
}

/** Two answers' counts added (the totals of a run). */
export function addUsage(a: Usage, b: Usage): Usage {
  return addTokenCounts(a, b)
}
