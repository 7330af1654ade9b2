import { estimateTextTokens } from './estimate-text.ts'

/** Shorter strings are cheaper to count again than to look up. */
const memoMinLength = 256
/** The memo keeps the strings it keys on: cap their total length, not just their number. */
const memoMaxChars = 16 * 1024 * 1024

/**
 * Token estimates memoised per string: every request re-sends the whole history, so each block's
 * text is counted once per process, not once per request.
 */
export class TokenEstimator {
  readonly #memo = new Map<string, number>()
  #chars = 0

  text(text: string): number {
    if (text.length < memoMinLength) return estimateTextTokens(text)
    const known = this.#memo.get(text)
    if (known !== undefined) return known
    const tokens = estimateTextTokens(text)
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
