import { estimateTextTokens } from './estimate-text.ts'

/** Shorter strings are cheaper to count again than to look up. */
const memoMinLength = 256
const memoMaxEntries = 50_000

/**
 * Token estimates memoised per string: every request re-sends the whole history, so each block's
 * text is counted once per process, not once per request.
 */
export class TokenEstimator {
  readonly #memo = new Map<string, number>()

  text(text: string): number {
    if (text.length < memoMinLength) return estimateTextTokens(text)
    const known = this.#memo.get(text)
    if (known !== undefined) return known
    const tokens = estimateTextTokens(text)
    if (this.#memo.size >= memoMaxEntries) this.#memo.delete(this.#memo.keys().next().value as string)
    this.#memo.set(text, tokens)
    return tokens
  }

  /** Structured values (tool inputs, schemas) count as the JSON the API sees. */
  value(value: unknown): number {
    return typeof value === 'string' ? this.text(value) : this.text(JSON.stringify(value) ?? '')
  }
}
