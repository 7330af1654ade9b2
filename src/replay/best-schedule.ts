/**
 * The cheapest batch schedule a one-call-per-turn tool loop could have had under the quality floor,
 * found with hindsight: every request's cost is known once the whole run is, so a dynamic program over
 * "where was the last batch" gives the exact optimum among schedules of whole batches. It is a yardstick
 * for a policy that decides as the run goes, not a strict bound on ctxgate: ctxgate checks the start
 * point on its own estimate (sized never to be under the real count, so it may start a little earlier)
 * and may leave a small old result whole, a kind of batch this model does not have.
 *
 * The model: request t (1-based) sends the head and rounds 1..t-1. Each request reads from the cache
 * what the previous one sent and writes the rest. A batch at t clears every result the floor lets it
 * (all rounds older than the newest `keepNewestRounds`); it reads up to its edit point (the first result
 * it clears) and writes everything after. Clearing all that is eligible is never worse than clearing
 * part: the edit point is the same, and whatever is left whole costs more now and later.
 */
import { anthropicMultipliers, type ModelPrices } from '../billing/prices.ts'

/** One tool round, in the upstream's token count: the call (assistant turn) and its result (user turn). */
export interface LoopRound {
  readonly call: number
  readonly result: number
  /** The result turn once its output is replaced by the cleared note (a result no larger than the note stays). */
  readonly clearedResult: number
}

export interface ToolLoop {
  /** Tools, system and the opening user turn: sent unchanged in every request. */
  readonly head: number
  readonly rounds: readonly LoopRound[]
}

export interface ScheduleFloor {
  /** The newest rounds always sent whole. */
  readonly keepNewestRounds: number
  /** A batch only once the conversation, as the client sends it (no edits), is at least this large. */
  readonly startTokens: number
  /** No batch in a request numbered below this (1-based), as ctxgate counts a session's requests. */
  readonly shortSessionRequests: number
}

export interface Schedule {
  /** Billed-equivalent input of the whole run, in uncached-input tokens. */
  readonly billed: number
  /** Requests (1-based) that make a batch. */
  readonly batchAt: readonly number[]
}

/** Prices the run with batches at the given requests; throws on a batch the floor does not allow. */
export function scheduleCost(
  loop: ToolLoop,
  floor: ScheduleFloor,
  batchAt: readonly number[],
  prices: ModelPrices = anthropicMultipliers,
): number {
  const costs = new LoopCosts(loop, prices)
  let billed = 0
  let cleared = 0
  let previous = 0
  for (const request of batchAt) {
    const next = costs.batchClears(request, cleared, floor)
    if (request <= previous || next === undefined)
      throw new RangeError(`the floor allows no batch at request ${request}`)
    billed += costs.plainRequests(previous + 1, request - 1, cleared) + costs.batchRequest(request, cleared, next)
    cleared = next
    previous = request
  }
  return billed + costs.plainRequests(previous + 1, costs.requests, cleared)
}

export function bestSchedule(
  loop: ToolLoop,
  floor: ScheduleFloor,
  prices: ModelPrices = anthropicMultipliers,
): Schedule {
  const costs = new LoopCosts(loop, prices)
  const last = costs.requests
  // cheapest[t]: the cheapest bill of requests 1..t with a batch at t (t = 0: the start, no batch yet).
  const cheapest: number[] = [0]
  const clearedAfter: number[] = [0]
  const cameFrom: number[] = [-1]
  let best: Schedule = { billed: costs.plainRequests(1, last, 0), batchAt: [] }
  for (let request = 1; request <= last; request++) {
    cheapest[request] = Number.POSITIVE_INFINITY
    for (let before = 0; before < request; before++) {
      const upTo = cheapest[before] as number
      if (!Number.isFinite(upTo)) continue
      const cleared = clearedAfter[before] as number
      const next = costs.batchClears(request, cleared, floor)
      if (next === undefined) continue
      const bill =
        upTo + costs.plainRequests(before + 1, request - 1, cleared) + costs.batchRequest(request, cleared, next)
      if (bill < (cheapest[request] as number)) {
        cheapest[request] = bill
        clearedAfter[request] = next
        cameFrom[request] = before
      }
    }
    const reached = cheapest[request] as number
    if (!Number.isFinite(reached)) continue
    const total = reached + costs.plainRequests(request + 1, last, clearedAfter[request] as number)
    if (total < best.billed) best = { billed: total, batchAt: pathTo(request, cameFrom) }
  }
  return best
}

function pathTo(request: number, cameFrom: readonly number[]): number[] {
  const path: number[] = []
  for (let at = request; at > 0; at = cameFrom[at] as number) path.unshift(at)
  return path
}

/** Prices of single requests; `cleared` is how many of the oldest rounds are cleared when it is sent. */
class LoopCosts {
  readonly requests: number
  readonly #loop: ToolLoop
  readonly #prices: ModelPrices
  /** wholeUpTo[k]: head plus rounds 1..k whole; clearedUpTo[k]: head plus rounds 1..k cleared. */
  readonly #wholeUpTo: number[]
  readonly #clearedUpTo: number[]

  constructor(loop: ToolLoop, prices: ModelPrices) {
    this.#loop = loop
    this.#prices = prices
    this.requests = loop.rounds.length + 1
    this.#wholeUpTo = [loop.head]
    this.#clearedUpTo = [loop.head]
    for (const [index, round] of loop.rounds.entries()) {
      this.#wholeUpTo.push((this.#wholeUpTo[index] as number) + round.call + round.result)
      this.#clearedUpTo.push((this.#clearedUpTo[index] as number) + round.call + round.clearedResult)
    }
  }

  /** Tokens of request t (rounds 1..t-1) with the oldest `cleared` rounds cleared. */
  size(request: number, cleared: number): number {
    const rounds = request - 1
    const done = Math.min(cleared, rounds)
    return (this.#clearedUpTo[done] as number) + (this.#wholeUpTo[rounds] as number) - (this.#wholeUpTo[done] as number)
  }

  /** Requests from..to with no batch: each reads the one before and writes what is new. */
  plainRequests(from: number, to: number, cleared: number): number {
    let billed = 0
    for (let request = from; request <= to; request++) {
      const read = request === 1 ? 0 : this.size(request - 1, cleared)
      billed += this.#prices.cacheRead * read + this.#prices.cacheWrite5m * (this.size(request, cleared) - read)
    }
    return billed
  }

  /** How many rounds are cleared after a batch at `request`, or undefined when the floor forbids one. */
  batchClears(request: number, cleared: number, floor: ScheduleFloor): number | undefined {
    const next = request - 1 - floor.keepNewestRounds
    if (next <= cleared || request < floor.shortSessionRequests) return undefined
    // Measured on the conversation as the client sends it, like ctxgate and the provider's own trigger.
    return this.size(request, 0) >= floor.startTokens ? next : undefined
  }

  /** A batch reads up to its edit point (the first result it actually shrinks) and writes the rest. */
  batchRequest(request: number, cleared: number, next: number): number {
    let first = cleared
    while (first < next && !this.#shrinks(first)) first++
    if (first === next) return this.plainRequests(request, request, next)
    const read = (this.#clearedUpTo[first] as number) + (this.#loop.rounds[first] as LoopRound).call
    return this.#prices.cacheRead * read + this.#prices.cacheWrite5m * (this.size(request, next) - read)
  }

  #shrinks(round: number): boolean {
    const { result, clearedResult } = this.#loop.rounds[round] as LoopRound
    return clearedResult < result
  }
}
