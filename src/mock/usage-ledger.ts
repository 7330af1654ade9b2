import { billedEquivalentInput } from '../billing/usage-totals.ts'
import type { MockUsage } from './types.ts'

/** What the mock billed since it started or was reset, summed over every chat answer. */
export interface UsageTotals {
  readonly requests: number
  readonly inputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWrite5mTokens: number
  readonly cacheWrite1hTokens: number
  readonly outputTokens: number
  /** The longest prompt one answer counted (input + read + writes). */
  readonly largestPromptTokens: number
  /** Input priced in plain input tokens: input + 1.25 × 5m write + 2 × 1h write + 0.1 × read. */
  readonly billedEquivalentInput: number
  /** Read tokens as a share of all prompt tokens (0 when nothing was sent). */
  readonly cacheReadShare: number
}

/** Sums the usage the mock reported, so a run can be priced from the upstream's side. */
export class UsageLedger {
  #requests = 0
  #input = 0
  #read = 0
  #write5m = 0
  #write1h = 0
  #output = 0
  #largest = 0

  record(usage: MockUsage | undefined): void {
    if (!usage) return
    this.#requests++
    this.#input += usage.inputTokens
    this.#read += usage.cacheReadTokens
    this.#write5m += usage.cacheWrite5mTokens
    this.#write1h += usage.cacheWrite1hTokens
    this.#output += usage.outputTokens
    const prompt = usage.inputTokens + usage.cacheReadTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens
    this.#largest = Math.max(this.#largest, prompt)
  }

  totals(): UsageTotals {
    const prompt = this.#input + this.#read + this.#write5m + this.#write1h
    return {
      requests: this.#requests,
      inputTokens: this.#input,
      cacheReadTokens: this.#read,
      cacheWrite5mTokens: this.#write5m,
      cacheWrite1hTokens: this.#write1h,
      outputTokens: this.#output,
      largestPromptTokens: this.#largest,
      billedEquivalentInput: Math.round(
        billedEquivalentInput({
          inputTokens: this.#input,
          cacheWrite5mTokens: this.#write5m,
          cacheWrite1hTokens: this.#write1h,
          cacheReadTokens: this.#read,
          outputTokens: 0,
        }),
      ),
      cacheReadShare: prompt === 0 ? 0 : this.#read / prompt,
    }
  }

  clear(): void {
    this.#requests = this.#input = this.#read = this.#write5m = this.#write1h = this.#output = this.#largest = 0
  }
}
