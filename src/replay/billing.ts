/** Token counts of one upstream answer, as its `usage` reported them. */
export interface Usage {
  readonly inputTokens: number
  readonly cacheWrite5mTokens: number
  readonly cacheWrite1hTokens: number
  readonly cacheReadTokens: number
  readonly outputTokens: number
}

export const zeroUsage: Usage = { inputTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, outputTokens: 0 }

/** Prices relative to uncached input (model-apis §2.3): 5-minute write 1.25×, 1-hour write 2×, read 0.1×. */
export const priceFactors = { input: 1, cacheWrite5m: 1.25, cacheWrite1h: 2, cacheRead: 0.1 } as const

/** Input tokens as if every one were billed at the uncached price. */
export function billedEquivalentInput(usage: Usage): number {
  return usage.inputTokens * priceFactors.input + usage.cacheWrite5mTokens * priceFactors.cacheWrite5m + usage.cacheWrite1hTokens * priceFactors.cacheWrite1h + usage.cacheReadTokens * priceFactors.cacheRead
}

export function promptTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens + usage.cacheReadTokens
}

/** Share of prompt tokens read from cache (0 when nothing was sent). */
export function cacheReadShare(usage: Usage): number {
  const total = promptTokens(usage)
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
