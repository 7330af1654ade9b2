/**
 * Prices a whole path of batches, not one batch alone: a batch now keeps every later request small
 * and makes every later batch cheaper, so "batch now" is compared with the best plan that waits.
 * The future is a straight-line forecast (growth per request, a share of it clearable later); the
 * best batch times over it come from a small dynamic programme, O(horizon²).
 */

export interface PathInput {
  /** Prompt tokens of the current request before the batch. */
  readonly size: number
  /** Prompt tokens left if the batch is made now (notes included). */
  readonly sizeAfter: number
  /** Tokens before the batch's edit point: they stay cached. */
  readonly keptPrefix: number
  /** Tokens of the newest protected rounds: the next batch's edit point comes after everything older. */
  readonly protectedTail: number
  /** What the protected rounds are expected to weigh at a later batch (the current tail is known, later ones are not). */
  readonly laterProtectedTail: number
  readonly growthPerRequest: number
  /** Share of the growth that a later batch may clear (tool results, once out of the protected rounds). */
  readonly clearableShare: number
  /** Requests after the current one. */
  readonly remaining: number
  readonly budget: number
  /** Prices as multiples of uncached input. */
  readonly read: number
  readonly write: number
  /** The current request finds its cache expired: every token is written whatever the plan. */
  readonly coldNow: boolean
  /** Chance that a later request finds its cache expired. */
  readonly coldLater: number
}

export interface PathPrices {
  /** Cost from now to the horizon if the batch is made now. */
  readonly batchNow: number
  /** Cost of the best plan that does not batch now. */
  readonly wait: number
  /** Cost of making no below-budget batch at all over the horizon. */
  readonly never: number
  /** One-time cost of the batch now (rewriting what follows its edit point). */
  readonly oneTimeCost: number
}

/** Tokens over the budget cost this much each: a plan that overflows is never the cheap one. */
const overflowPenalty = 1_000

export function pricePath(input: PathInput): PathPrices {
  const path = new PathPricer(input)
  const oneTimeCost = input.coldNow ? 0 : (input.write - input.read) * Math.max(0, input.sizeAfter - input.keptPrefix)
  return {
    batchNow: oneTimeCost + path.cheapestFrom(0, input.sizeAfter, input.sizeAfter - input.protectedTail),
    wait: path.cheapestFrom(0, input.size, input.keptPrefix),
    never: path.withoutBatches(input.size),
    oneTimeCost,
  }
}

class PathPricer {
  readonly #input: PathInput
  readonly #steps: number
  /** Price of carrying a token one more request: a read, or a write when the cache has expired. */
  readonly #carry: number
  /** Extra price of a token rewritten by a later batch. */
  readonly #rewrite: number
  /** #afterBatch[t]: cheapest cost of steps t..horizon given a batch at step t, its rewrite excluded. */
  readonly #afterBatch: number[]

  constructor(input: PathInput) {
    this.#input = input
    this.#steps = Math.max(0, Math.round(input.remaining))
    this.#carry = (1 - input.coldLater) * input.read + input.coldLater * input.write
    this.#rewrite = (1 - input.coldLater) * (input.write - input.read)
    this.#afterBatch = Array.from({ length: this.#steps + 1 }, () => 0)
    for (let step = this.#steps; step >= 1; step--)
      this.#afterBatch[step] = this.cheapestFrom(
        step,
        this.#sizeAfterBatch(step),
        this.#sizeAfterBatch(step) - input.laterProtectedTail,
      )
  }

  /** Cheapest cost of steps `step`..horizon, starting at `size` tokens, with later batches breaking the cache after `frozenPrefix`. */
  cheapestFrom(step: number, size: number, frozenPrefix: number): number {
    let cheapest = this.#segment(size, step, this.#steps + 1 - step)
    // Any later step may batch: the client's conversation only grows, so once past the start point it stays past.
    for (let next = step + 1; next <= this.#steps; next++) {
      const after = this.#sizeAfterBatch(next)
      const cost =
        this.#segment(size, step, next - step) +
        this.#rewrite * Math.max(0, after - frozenPrefix) +
        (this.#afterBatch[next] as number)
      if (cost < cheapest) cheapest = cost
    }
    return cheapest
  }

  withoutBatches(size: number): number {
    return this.#segment(size, 0, this.#steps + 1)
  }

  /** What is left after a batch at a later step: what could not be cleared now, the protected rounds of then, and the unclearable part of the growth. */
  #sizeAfterBatch(step: number): number {
    const { sizeAfter, protectedTail, laterProtectedTail, clearableShare, growthPerRequest } = this.#input
    return sizeAfter - protectedTail + laterProtectedTail + (1 - clearableShare) * growthPerRequest * step
  }

  /** Requests first..first+count-1 of a stretch without batches that starts at `size` tokens. */
  #segment(size: number, first: number, count: number): number {
    if (count <= 0) return 0
    const growth = this.#input.growthPerRequest
    let cost = this.#carry * (count * size + (growth * count * (count - 1)) / 2)
    if (first === 0) cost += ((this.#input.coldNow ? this.#input.write : this.#input.read) - this.#carry) * size
    return cost + overflowPenalty * overflowTokens(size, growth, count, this.#input.budget)
  }
}

/** Sum over i < count of the tokens by which size + growth·i exceeds the budget. */
function overflowTokens(size: number, growth: number, count: number, budget: number): number {
  if (size + growth * (count - 1) <= budget) return 0
  const first = size > budget || growth <= 0 ? 0 : Math.floor((budget - size) / growth) + 1
  const over = count - first
  return over * (size - budget) + (growth * (first + count - 1) * over) / 2
}
