import { estimateTextTokens } from './estimate-text.ts'
import { sampledCounter } from './sampled-count.ts'

/** Shorter strings are cheaper to estimate again than to look up. */
const memoMinLength = 256
/** An exact count costs ~20 µs even for a short string (docs/estimates.md): only the shortest are counted again. */
const exactMemoMinLength = 32
/** The memo keeps the strings it keys on: cap their total length, not just their number. */
const memoMaxChars = 16 * 1024 * 1024
/** Model names `isReady` remembers (a deployment serves a handful; the set only spares an await). */
const readyModelsKept = 256

/** Exact text counters by model, for the models whose vocabulary is public (OpenAI's); loaded on demand. */
export interface ExactCounters {
  /** The model's exact counter once it is loaded; undefined for a model without one, or before it loads. */
  counterFor(model: string): ((text: string) => number) | undefined
  /** Resolves once the model's counter is loaded or known to be unavailable. */
  ready(model: string): Promise<void>
  /**
   * A public BPE vocabulary's counter for models without one of their own (docs/estimates.md): the
   * calibration sizes new content by it. Undefined until it is loaded.
   */
  reference?(): ((text: string) => number) | undefined
  /** Resolves once the reference vocabulary is loaded (or unavailable), for a model without a vocabulary of its own. */
  loadReference?(model: string): Promise<void>
}

/** The same exact counters without the reference vocabulary: the prior alone sizes new content. */
export function withoutReference(counters: ExactCounters): ExactCounters {
  return { counterFor: (model) => counters.counterFor(model), ready: (model) => counters.ready(model) }
}

/**
 * Token counts memoised per string: every request re-sends the whole history, so each block's
 * text is counted once per process, not once per request. By default an estimate meant to err high;
 * `forModel` gives the exact count for a model whose tokenizer is public.
 */
export class TokenEstimator {
  readonly #memo = new Map<string, number>()
  readonly #count: (text: string) => number
  readonly #minLength: number
  readonly #exact: ExactCounters | undefined
  readonly #byCounter = new Map<(text: string) => number, TokenEstimator>()
  /**
   * The reference's own memo, apart from `#byCounter`: cl100k is both gpt-4's exact counter and the
   * reference, and the reference counts long texts on samples, which must never serve as an exact count.
   */
  #reference: { readonly counter: (text: string) => number; readonly estimator: TokenEstimator } | undefined
  #chars = 0
  readonly #readyModels = new Set<string>()
  /** The count is the tokenizer's own, not an estimate. */
  readonly exact: boolean

  constructor(exact?: ExactCounters, count?: (text: string) => number) {
    this.#exact = exact
    this.#count = count ?? estimateTextTokens
    this.exact = count !== undefined
    this.#minLength = this.exact ? exactMemoMinLength : memoMinLength
  }

  /** The counter for one model's requests: exact where its tokenizer is loaded, this estimator otherwise. */
  forModel(model: string): TokenEstimator {
    const counter = this.#exact?.counterFor(model)
    if (counter === undefined || this.exact) return this
    let estimator = this.#byCounter.get(counter)
    if (!estimator) {
      estimator = new TokenEstimator(undefined, counter)
      this.#byCounter.set(counter, estimator)
    }
    return estimator
  }

  /**
   * The reference vocabulary's counter, memoised like this one, for an estimate that is not exact;
   * undefined for an exact one (its own count is the reference) and until the vocabulary is loaded.
   */
  reference(): TokenEstimator | undefined {
    if (this.exact) return undefined
    const counter = this.#exact?.reference?.()
    if (counter === undefined) return undefined
    if (this.#reference?.counter !== counter)
      this.#reference = {
        counter,
        // The whole text's estimate from this estimator's memo: the prompt's estimate counted it just before.
        estimator: new TokenEstimator(
          undefined,
          sampledCounter(counter, estimateTextTokens, (text) => this.text(text)),
        ),
      }
    return this.#reference.estimator
  }

  /** Resolves when `forModel(model)` will give the exact counter if the model has one, and `reference()` its reference if not. */
  async ready(model: string): Promise<void> {
    await Promise.all([this.#exact?.ready(model), this.#exact?.loadReference?.(model)])
    // Model names are the clients' to choose: a bounded set, emptied when full, costs at most an await again.
    if (this.#readyModels.size >= readyModelsKept) this.#readyModels.clear()
    this.#readyModels.add(model)
  }

  /** `ready(model)` has resolved before (a vocabulary once loaded stays loaded): a request need not wait for it again. */
  isReady(model: string): boolean {
    return this.#readyModels.has(model)
  }

  text(text: string): number {
    if (text.length < this.#minLength) return this.#count(text)
    const known = this.#memo.get(text)
    if (known !== undefined) return known
    const tokens = this.#count(text)
    if (text.length > memoMaxChars / 4) return tokens
    this.#memo.set(text, tokens)
    this.#chars += text.length
    // Oldest first (insertion order) until the held text fits again.
    for (const key of this.#memo.keys()) {
      if (this.#chars <= memoMaxChars) break
      this.#memo.delete(key)
      this.#chars -= key.length
    }
    return tokens
  }

  /** Structured values (tool inputs, schemas) count as the JSON the API sees. */
  value(value: unknown): number {
    return typeof value === 'string' ? this.text(value) : this.text(JSON.stringify(value) ?? '')
  }
}
