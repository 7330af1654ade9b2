import { createRequire } from 'node:module'
import type { ExactCounters } from '../../../rewrite/estimate.ts'
import { openaiEncodingOf, type OpenAIEncoding } from './openai-encoding.ts'
import { countWithRunGuard } from './long-run-guard.ts'
import { piecewiseCounter } from './piecewise-count.ts'

interface Encoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number
}

/** Special-token text in a prompt (`<|endoftext|>`) is ordinary text to the API: count it, never throw. */
const asText = { disallowedSpecial: new Set<string>() }

/**
 * Exact text counters for OpenAI's public vocabularies (gpt-tokenizer). Each vocabulary's ranks take
 * ~0.4 s and ~50 MB to load, so one is loaded the first time a request for one of its models comes,
 * not at start-up: an Anthropic-only deployment never loads o200k (cl100k, the reference vocabulary
 * that sizes new content for other models, unless `rewrite.referenceCount` is off: docs/estimates.md).
 */
const loaded = new Map<OpenAIEncoding, (text: string) => number>()
const loading = new Map<OpenAIEncoding, Promise<void>>()
const require = createRequire(import.meta.url)
/** The vocabulary that sizes new content for models without a public one (docs/estimates.md). */
export const referenceEncoding: OpenAIEncoding = 'cl100k_base'

export function exactCounter(encoding: OpenAIEncoding): ((text: string) => number) | undefined {
  return loaded.get(encoding)
}

/** Loads the vocabulary once; resolves when `exactCounter(encoding)` has it (or the library could not be loaded). */
export function loadExactCounter(encoding: OpenAIEncoding): Promise<void> {
  const pending = loading.get(encoding)
  if (pending) return pending
  const load = new Promise<void>((resolve) => {
    // Off the current turn of the event loop, so the request that asked is not charged twice.
    setImmediate(() => {
      try {
        const library = require(`gpt-tokenizer/encoding/${encoding}`) as Encoding
        const count = (text: string): number => library.countTokens(text, asText)
        // cl100k is also the reference vocabulary, counted on every new text: split without the regex.
        const fast = encoding === 'cl100k_base' ? piecewiseCounter(count) : count
        loaded.set(encoding, (text) => countWithRunGuard(text, fast))
      } catch {
        // Without the library the estimate stands in; calibration still corrects it from usage.
      }
      resolve()
    })
  })
  loading.set(encoding, load)
  return load
}

/** The exact counters ctxgate's estimator uses: OpenAI models' public vocabularies, each loaded on first use. */
export const openaiExactCounters: ExactCounters = {
  counterFor(model) {
    const encoding = openaiEncodingOf(model)
    return encoding === undefined ? undefined : exactCounter(encoding)
  },
  ready(model) {
    const encoding = openaiEncodingOf(model)
    return encoding === undefined ? Promise.resolve() : loadExactCounter(encoding)
  },
  reference() {
    return exactCounter(referenceEncoding)
  },
  // Like an exact counter, the reference is loaded when the first request that needs it arrives.
  loadReference(model) {
    return openaiEncodingOf(model) === undefined ? loadExactCounter(referenceEncoding) : Promise.resolve()
  },
}
