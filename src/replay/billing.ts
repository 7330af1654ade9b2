import { promptTokensOf, zeroUsage, type Usage } from '../model-call/usage.ts'

export { zeroUsage, type Usage }

/** Prices relative to uncached input, as Anthropic publishes them: 5-minute write 1.25×, 1-hour write 2×, read 0.1×. */
export const priceFactors = { input: 1, cacheWrite5m: 1.25, cacheWrite1h: 2, cacheRead: 0.1 } as const

/** Input tokens as if every one were billed at the uncached price. */
export function billedEquivalentInput(usage: Usage): number {
  return (
    usage.inputTokens * priceFactors.input +
    usage.cacheWrite5mTokens * priceFactors.cacheWrite5m +
    usage.cacheWrite1hTokens * priceFactors.cacheWrite1h +
    usage.cacheReadTokens * priceFactors.cacheRead
  )
}

/** Share of prompt tokens read from cache (0 when nothing was sent). */
export function cacheReadShare(usage: Usage): number {
  const total = promptTokensOf(usage)
  return total === 0 ? 0 : usage.cacheReadTokens / total
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cacheWrite5mTokens: a.cacheWrite5mTokens + b.cacheWrite5mTokens,
    cacheWrite1hTokens: a.cacheWrite1hTokens + b.cacheWrite1hTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  }
}
