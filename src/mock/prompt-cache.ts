import { createHash } from 'node:crypto'

/** One position in the cached prefix: a tool, a system block or a message content block. */
export interface PromptBlock {
  /** Canonical text of the block without its cache_control, hashed into the prefix. */
  readonly key: string
  readonly tokens: number
  readonly breakpoint?: '5m' | '1h'
}

export interface CacheUsage {
  readonly inputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWrite5mTokens: number
  readonly cacheWrite1hTokens: number
  readonly totalTokens: number
}

const ttlMs = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const
/** Reads look back at most 20 positions per breakpoint, the breakpoint itself first (https://platform.claude.com/docs/en/build-with-claude/prompt-caching). */
const lookback = 20

/**
 * How a cache_control marker on a block inside the prefix just read is taken. `literal` (the default):
 * "marking a block writes exactly one cache entry", so it creates an entry there at no charge.
 * `strict`: it writes nothing of its own (an entry already there is kept alive); only markers past
 * what was read create entries. Nobody has checked which the real API does; the economy must pay under both.
 */
export type CacheWrites = 'literal' | 'strict'

export const cacheWriteReadings: readonly CacheWrites[] = ['literal', 'strict']

interface Entry {
  expiresAt: number
  ttl: '5m' | '1h'
}

/**
 * Anthropic's explicit prompt cache as https://platform.claude.com/docs/en/build-with-claude/prompt-caching describes it: each breakpoint writes one entry
 * for the prefix ending at it (under the `literal` reading; see CacheWrites); reads find the longest
 * entry within the lookback of any breakpoint.
 */
export class AnthropicPromptCache {
  readonly #entries = new Map<string, Entry>()
  readonly #now: () => number
  readonly #writes: CacheWrites

  constructor(now: () => number = Date.now, writes: CacheWrites = 'literal') {
    this.#now = now
    this.#writes = writes
  }

  use(scope: string, blocks: readonly PromptBlock[], minCacheableTokens: number): CacheUsage {
    const now = this.#now()
    const hashes = prefixHashes(
      scope,
      blocks.map((block) => block.key),
    )
    const prefixTokens = runningTotals(blocks.map((block) => block.tokens))
    const totalTokens = prefixTokens[prefixTokens.length - 1] ?? 0
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []))

    let readEnd = -1
    for (const position of breakpoints) {
      for (let candidate = position; candidate > position - lookback && candidate >= 0; candidate--) {
        const entry = this.#entries.get(hashes[candidate] as string)
        if (entry && entry.expiresAt > now) {
          readEnd = Math.max(readEnd, candidate)
          break
        }
      }
    }
    const cacheReadTokens = readEnd >= 0 ? (prefixTokens[readEnd] as number) : 0
    if (readEnd >= 0) this.#refresh(hashes[readEnd] as string, now)

    let writtenUpTo = cacheReadTokens
    let cacheWrite5mTokens = 0
    let cacheWrite1hTokens = 0
    for (const position of breakpoints) {
      const ttl = blocks[position]?.breakpoint ?? '5m'
      const prefix = prefixTokens[position] as number
      if (position <= readEnd) {
        // Literal: marking a block writes its entry even inside what was read; those tokens were read, so it bills nothing.
        if (prefix >= minCacheableTokens) this.#keep(hashes[position] as string, ttl, now, this.#writes === 'literal')
        continue
      }
      if (prefix < minCacheableTokens) continue
      this.#entries.set(hashes[position] as string, { expiresAt: now + ttlMs[ttl], ttl })
      const written = prefix - writtenUpTo
      if (ttl === '1h') cacheWrite1hTokens += written
      else cacheWrite5mTokens += written
      writtenUpTo = prefix
    }
    return {
      inputTokens: totalTokens - cacheReadTokens - cacheWrite5mTokens - cacheWrite1hTokens,
      cacheReadTokens,
      cacheWrite5mTokens,
      cacheWrite1hTokens,
      totalTokens,
    }
  }

  clear(): void {
    this.#entries.clear()
  }

  #keep(hash: string, ttl: '5m' | '1h', now: number, create: boolean): void {
    const entry = this.#entries.get(hash)
    if (entry) entry.expiresAt = Math.max(entry.expiresAt, now + ttlMs[ttl])
    else if (create) this.#entries.set(hash, { expiresAt: now + ttlMs[ttl], ttl })
  }

  #refresh(hash: string, now: number): void {
    const entry = this.#entries.get(hash)
    if (entry) entry.expiresAt = now + ttlMs[entry.ttl]
  }
}

/**
 * OpenAI's automatic prefix cache (https://developers.openai.com/api/docs/guides/prompt-caching): prompts of 1024+ tokens are cached; hits come
 * in 128-token steps from 1024, at message boundaries of an earlier prompt with the same key.
 */
export class OpenAIPromptCache {
  readonly #prefixes = new Map<string, number>()
  static readonly minimum = 1_024
  static readonly step = 128

  use(scope: string, messageKeys: readonly string[], messageTokens: readonly number[], totalTokens: number): number {
    const hashes = prefixHashes(scope, messageKeys)
    const prefixTokens = runningTotals(messageTokens)
    let cached = 0
    for (let index = hashes.length - 1; index >= 0; index--) {
      const tokens = this.#prefixes.get(hashes[index] as string)
      if (tokens !== undefined) {
        cached = tokens
        break
      }
    }
    hashes.forEach((hash, index) => {
      const tokens = prefixTokens[index] as number
      if (tokens >= OpenAIPromptCache.minimum) this.#prefixes.set(hash, tokens)
    })
    if (cached < OpenAIPromptCache.minimum) return 0
    return Math.min(Math.floor(cached / OpenAIPromptCache.step) * OpenAIPromptCache.step, totalTokens)
  }

  clear(): void {
    this.#prefixes.clear()
  }
}

/** Each position's hash covers it and everything before it, so two prompts agree up to the last equal hash. */
export function prefixHashes(scope: string, keys: readonly string[]): string[] {
  let previous = createHash('sha256').update(scope).digest('hex')
  return keys.map((key) => {
    previous = createHash('sha256').update(previous).update(key).digest('hex')
    return previous
  })
}

export function runningTotals(values: readonly number[]): number[] {
  let sum = 0
  return values.map((value) => (sum += value))
}
