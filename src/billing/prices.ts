/**
 * What a request costs. Cache prices are multiples of the uncached input price (that is how both
 * providers publish them); dollars are per million tokens and may be unknown for a family.
 */
import { globToRegExp } from '../util/glob.ts'
import { billedTokenCounts, type Usage } from '../model-call/usage.ts'

export interface ModelPrices {
  /** Glob on the model name; the first matching entry wins. */
  readonly match: string
  /** Dollars per million uncached input tokens; null when the price is not known. */
  readonly input: number | null
  /** Dollars per million output tokens; null when not known. */
  readonly output: number | null
  /** A token written to a 5-minute cache entry, as a multiple of input (Anthropic 1.25). */
  readonly cacheWrite5m: number
  /** A token written to a 1-hour entry (Anthropic 2; providers without one: same as 5m). */
  readonly cacheWrite1h: number
  /** A token read from the cache (Anthropic 0.1). */
  readonly cacheRead: number
}

/** Used when no configured entry matches: Anthropic's published multipliers, as config/default.yaml's `*` entry. */
export const defaultMultipliers: ModelPrices = {
  match: '*',
  input: null,
  output: null,
  cacheWrite5m: 1.25,
  cacheWrite1h: 2,
  cacheRead: 0.1,
}

export function pricesFor(entries: readonly ModelPrices[], model: string): ModelPrices {
  return entries.find((entry) => globToRegExp(entry.match).test(model)) ?? defaultMultipliers
}

/** Prompt tokens weighted by price, in uncached-input tokens: what the replay calls billed-equivalent input. */
export function billedInputTokens(usage: Usage, prices: ModelPrices): number {
  // A server-side compaction pass is billed beside the answer's own counts.
  if (usage.compaction) return billedInputTokens(billedTokenCounts(usage), prices)
  return (
    usage.inputTokens +
    usage.cacheWrite5mTokens * prices.cacheWrite5m +
    usage.cacheWrite1hTokens * prices.cacheWrite1h +
    usage.cacheReadTokens * prices.cacheRead
  )
}

/** Dollars of one usage (prompt and output); null when the family's dollar prices are unknown. `promptScale` stretches the prompt side (an unedited estimate). */
export function billedDollars(usage: Usage, prices: ModelPrices, promptScale = 1): number | null {
  if (prices.input === null) return null
  const input = (billedInputTokens(usage, prices) * promptScale * prices.input) / 1_000_000
  const outputTokens = usage.outputTokens + (usage.compaction?.outputTokens ?? 0)
  const output = prices.output === null ? 0 : (outputTokens * prices.output) / 1_000_000
  return input + output
}

/**
 * Dollars of a number of billed-equivalent input tokens (for "saved" figures); null when unknown.
 * @public Nothing calls it on this branch; the live page's savings work (issue 24) may.
 */
export function dollarsOfInputTokens(tokens: number, prices: ModelPrices): number | null {
  return prices.input === null ? null : (tokens * prices.input) / 1_000_000
}

/** The write multiplier of a TTL. */
export function writePrice(prices: ModelPrices, ttl: '5m' | '1h'): number {
  return ttl === '1h' ? prices.cacheWrite1h : prices.cacheWrite5m
}
