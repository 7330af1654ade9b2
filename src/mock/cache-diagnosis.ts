import { prefixHashes, runningTotals, type PromptBlock } from './prompt-cache.ts'

/** How many of a prompt's blocks are tools and system, in the order the cache hashes them. */
export interface PromptParts {
  readonly toolCount: number
  readonly systemCount: number
}

/** What the mock keeps of one answered request to diagnose the next one against it. */
export interface PromptFingerprint extends PromptParts {
  readonly model: string
  readonly hashes: readonly string[]
  readonly prefixTokens: readonly number[]
  /** Tokens up to the last breakpoint long enough to be cached: what a following request could read. */
  readonly cachedTokens: number
}

export type CacheMissReasonJson =
  | {
      readonly type: 'model_changed' | 'tools_changed' | 'system_changed' | 'messages_changed'
      readonly cache_missed_input_tokens: number
    }
  | { readonly type: 'previous_message_not_found' }

/** The answer's `diagnostics`: null when nothing the previous request cached was missed. */
export type DiagnosticsJson = { readonly cache_miss_reason: CacheMissReasonJson } | null

export function fingerprintOf(
  model: string,
  blocks: readonly PromptBlock[],
  parts: PromptParts,
  minCacheableTokens: number,
): PromptFingerprint {
  const prefixTokens = runningTotals(blocks.map((block) => block.tokens))
  let cachedTokens = 0
  blocks.forEach((block, index) => {
    const prefix = prefixTokens[index] ?? 0
    if (block.breakpoint && prefix >= minCacheableTokens) cachedTokens = prefix
  })
  return {
    model,
    ...parts,
    hashes: prefixHashes(
      '',
      blocks.map((block) => block.key),
    ),
    prefixTokens,
    cachedTokens,
  }
}

/**
 * The cache-diagnosis beta as the mock plays it: per message id it answered, the prompt it saw;
 * a later request naming that id learns the first part that changed (model, tools, system,
 * messages, in the cache's own order) and how many cached tokens it missed. Bounded: the oldest
 * ids are forgotten first, and then reported as not found, as an expired record would be.
 */
export class PromptFingerprints {
  readonly #byId = new Map<string, PromptFingerprint>()
  readonly #limit: number

  constructor(limit = 1_000) {
    this.#limit = limit
  }

  remember(messageId: string, fingerprint: PromptFingerprint): void {
    this.#byId.set(messageId, fingerprint)
    if (this.#byId.size > this.#limit) this.#byId.delete(this.#byId.keys().next().value as string)
  }

  diagnose(previousMessageId: string, current: PromptFingerprint): DiagnosticsJson {
    const previous = this.#byId.get(previousMessageId)
    if (!previous) return { cache_miss_reason: { type: 'previous_message_not_found' } }
    const reason = missReason(previous, current)
    return reason ? { cache_miss_reason: reason } : null
  }

  clear(): void {
    this.#byId.clear()
  }
}

function missReason(previous: PromptFingerprint, current: PromptFingerprint): CacheMissReasonJson | undefined {
  if (previous.cachedTokens === 0) return undefined
  if (previous.model !== current.model)
    return { type: 'model_changed', cache_missed_input_tokens: previous.cachedTokens }
  let common = 0
  while (common < previous.hashes.length && previous.hashes[common] === current.hashes[common]) common++
  const kept = common > 0 ? (previous.prefixTokens[common - 1] ?? 0) : 0
  const missed = previous.cachedTokens - kept
  if (missed <= 0) return undefined
  return { type: changedPart(previous, current), cache_missed_input_tokens: missed }
}

/** The first part, in hashing order, that differs between the two prompts. */
function changedPart(
  previous: PromptFingerprint,
  current: PromptFingerprint,
): 'tools_changed' | 'system_changed' | 'messages_changed' {
  const sameThrough = (count: number): boolean =>
    count === 0 || previous.hashes[count - 1] === current.hashes[count - 1]
  if (previous.toolCount !== current.toolCount || !sameThrough(previous.toolCount)) return 'tools_changed'
  const head = previous.toolCount + previous.systemCount
  if (previous.systemCount !== current.systemCount || !sameThrough(head)) return 'system_changed'
  return 'messages_changed'
}
