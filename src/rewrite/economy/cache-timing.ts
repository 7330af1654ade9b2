/**
 * Time and the cache: whether a session's prefix has expired since its previous request (then a
 * batch costs nothing extra), and which TTL to write the stable part of the prompt with.
 */
import type { Cadence } from './cadence.ts'
import type { ModelPrices } from '../../billing/prices.ts'

export const ttlMs = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const

/** The prefix written with this TTL has expired: the next request writes everything anyway. */
export function isCold(msSinceLastRequest: number | undefined, ttl: '5m' | '1h'): boolean {
  return msSinceLastRequest !== undefined && msSinceLastRequest > ttlMs[ttl]
}

export interface TtlInput {
  /** The client put a TTL on any of its own markers: its choice stands. */
  readonly clientSetTtl: boolean
  /** Tokens of the stable part: tools, system, and the prompt up to the frozen batch boundary. */
  readonly stableTokens: number
  readonly cadence: Cadence
  readonly prices: ModelPrices
}

export interface TtlChoice {
  readonly ttl: '5m' | '1h'
  /** Expected cost of keeping the stable part cached over the requests ahead, per TTL (uncached-input tokens). */
  readonly expected5m: number
  readonly expected1h: number
}

/**
 * A 1-hour entry costs more to write but survives pauses of 5 to 60 minutes. Over the requests
 * ahead, each pause longer than the TTL rewrites the stable part instead of reading it; the 1-hour
 * entry also pays its write premium once. The stable part sits before every 5-minute marker, so
 * a 1-hour marker there keeps the required TTL order (longer first).
 */
export function chooseStableTtl(input: TtlInput): TtlChoice | undefined {
  if (input.clientSetTtl || input.cadence.pausesOver5m === 0) return undefined
  const { prices, stableTokens, cadence } = input
  const ahead = Math.max(1, cadence.expectedRemaining)
  const expected5m = ahead * cadence.pausesOver5m * (prices.cacheWrite5m - prices.cacheRead) * stableTokens
  const expected1h =
    (prices.cacheWrite1h - prices.cacheWrite5m) * stableTokens +
    ahead * cadence.pausesOver1h * (prices.cacheWrite1h - prices.cacheRead) * stableTokens
  return { ttl: expected1h < expected5m ? '1h' : '5m', expected5m, expected1h }
}
