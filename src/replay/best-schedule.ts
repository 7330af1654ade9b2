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
import { clearRisks, hazardOf, type ToolCall } from '../rewrite/clear-order.ts'
import { defaultMultipliers, type ModelPrices } from '../billing/prices.ts'
import { readsAnEditNeeds } from '../rewrite/restore.ts'

/** One tool round, in the upstream's token count: the call (assistant turn) and its result (user turn). */
export interface LoopRound {
  readonly call: number
  readonly result: number
  /** The result turn once its output is replaced by the cleared note (a result no larger than the note stays). */
  readonly clearedResult: number
  /** The round's calls (parallel calls share a round), so the floor's need hazard can be judged as ctxgate judges it (clear-order.ts). */
  readonly tools?: readonly ToolCall[]
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
  /** A result the agent needs again more often than this per request stays whole (rounds that name their call). */
  readonly maxNeedHazard?: number
  /**
   * A read that an edit at the newest round or later will need stays whole: ctxgate restores such a
   * read on use (docs/quality.md), so a yardstick that cleared it for good would not meet the same floor.
   */
  readonly keepReadsEditsNeed?: boolean
}

/** The floor a ctxgate config's economy section sets (the same fields the economy reads). */
export function scheduleFloorOf(economy: {
  readonly keepRecentRounds: number
  readonly startTokens: number
  readonly shortSessionRequests: number
  readonly maxNeedHazard: number
}): ScheduleFloor {
  return {
    keepNewestRounds: economy.keepRecentRounds,
    startTokens: economy.startTokens,
    shortSessionRequests: economy.shortSessionRequests,
    maxNeedHazard: economy.maxNeedHazard,
    keepReadsEditsNeed: true,
  }
}

export interface Schedule {
  /** Billed-equivalent input of the whole run, in uncached-input tokens. */
  readonly billed: number
  /** Requests (1-based) that make a batch. */
  readonly batchAt: readonly number[]
}

/** Which rounds are cleared (true) when a request is sent. */
type Cleared = readonly boolean[]

/** Prices the run with batches at the given requests; throws on a batch the floor does not allow. */
export function scheduleCost(
  loop: ToolLoop,
  floor: ScheduleFloor,
  batchAt: readonly number[],
  prices: ModelPrices = defaultMultipliers,
): number {
  const costs = new LoopCosts(loop, floor, prices)
  let billed = 0
  let cleared: Cleared = costs.none
  let previous = 0
  for (const request of batchAt) {
    const next = request > previous ? costs.batchClears(request, cleared) : undefined
    if (next === undefined) throw new RangeError(`the floor allows no batch at request ${request}`)
    billed += costs.plainRequests(previous + 1, request - 1, cleared) + costs.batchRequest(request, cleared, next)
    cleared = next
    previous = request
  }
  return billed + costs.plainRequests(previous + 1, costs.requests, cleared)
}

export function bestSchedule(loop: ToolLoop, floor: ScheduleFloor, prices: ModelPrices = defaultMultipliers): Schedule {
  const costs = new LoopCosts(loop, floor, prices)
  const last = costs.requests
  // cheapest[t]: the cheapest bill of requests 1..t with a batch at t (t = 0: the start, no batch yet).
  const cheapest: number[] = [0]
  const clearedAfter: Cleared[] = [costs.none]
  const cameFrom: number[] = [-1]
  let best: Schedule = { billed: costs.plainRequests(1, last, costs.none), batchAt: [] }
  for (let request = 1; request <= last; request++) {
    cheapest[request] = Number.POSITIVE_INFINITY
    for (let before = 0; before < request; before++) {
      const upTo = cheapest[before] as number
      if (!Number.isFinite(upTo)) continue
      const cleared = clearedAfter[before] as Cleared
      const next = costs.batchClears(request, cleared)
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
    const total = reached + costs.plainRequests(request + 1, last, clearedAfter[request] as Cleared)
    if (total < best.billed) best = { billed: total, batchAt: pathTo(request, cameFrom) }
  }
  return best
}

function pathTo(request: number, cameFrom: readonly number[]): number[] {
  const path: number[] = []
  for (let at = request; at > 0; at = cameFrom[at] as number) path.unshift(at)
  return path
}

/** Prices of single requests, given which rounds are cleared when each is sent. */
class LoopCosts {
  readonly requests: number
  readonly none: Cleared
  readonly #loop: ToolLoop
  readonly #floor: ScheduleFloor
  readonly #prices: ModelPrices
  /** wholeUpTo[k]: head plus rounds 1..k whole (the conversation as the client sends it). */
  readonly #wholeUpTo: number[]
  /** neededUntil[r]: the last round whose edit needs round r's read whole (-1: none). */
  readonly #neededUntil: readonly number[]
  /** Hazards by request: the DP asks for the same request's many times. */
  readonly #hazards = new Map<number, Map<number, number>>()

  constructor(loop: ToolLoop, floor: ScheduleFloor, prices: ModelPrices) {
    this.#loop = loop
    this.#floor = floor
    this.#prices = prices
    this.requests = loop.rounds.length + 1
    this.none = loop.rounds.map(() => false)
    this.#wholeUpTo = [loop.head]
    for (const [index, round] of loop.rounds.entries())
      this.#wholeUpTo.push((this.#wholeUpTo[index] as number) + round.call + round.result)
    this.#neededUntil = floor.keepReadsEditsNeed ? neededByEdits(loop.rounds) : loop.rounds.map(() => -1)
  }

  /** Tokens of request t (rounds 1..t-1), the cleared ones at their note's size. */
  size(request: number, cleared: Cleared): number {
    let size = this.#loop.head
    for (let round = 0; round < request - 1; round++) size += this.#roundTokens(round, cleared)
    return size
  }

  /** Requests from..to with no batch: each reads the one before and writes what is new. */
  plainRequests(from: number, to: number, cleared: Cleared): number {
    if (to < from) return 0
    let billed = 0
    let previous = from === 1 ? 0 : this.size(from - 1, cleared)
    for (let request = from; request <= to; request++) {
      const size = request === 1 ? this.#loop.head : previous + this.#roundTokens(request - 2, cleared)
      billed += this.#prices.cacheRead * previous + this.#prices.cacheWrite5m * (size - previous)
      previous = size
    }
    return billed
  }

  /**
   * What is cleared after a batch at `request`, or undefined when the floor forbids one there or it
   * would clear nothing new: every round older than the protected ones that the floor lets go, and
   * whatever earlier batches cleared (an edit stays).
   */
  batchClears(request: number, cleared: Cleared): Cleared | undefined {
    const floor = this.#floor
    if (request < floor.shortSessionRequests) return undefined
    // Measured on the conversation as the client sends it, like ctxgate and the provider's own trigger.
    if ((this.#wholeUpTo[request - 1] as number) < floor.startTokens) return undefined
    const oldest = request - 1 - floor.keepNewestRounds
    const hazards = this.#hazardsAt(request)
    let added = false
    const next = cleared.map((already, round) => {
      if (already || round >= oldest || !this.#shrinks(round)) return already
      // Request t's newest round is t − 2 (0-based): an edit there or later still needs the read.
      if ((this.#neededUntil[round] as number) >= request - 2) return false
      const hazard = hazards?.get(round)
      if (hazard !== undefined && hazard > (floor.maxNeedHazard as number)) return false
      added = true
      return true
    })
    return added ? next : undefined
  }

  /** A batch reads up to its edit point (the first result it newly shrinks) and writes the rest. */
  batchRequest(request: number, cleared: Cleared, next: Cleared): number {
    const first = next.findIndex((now, round) => now && !cleared[round])
    if (first < 0) return this.plainRequests(request, request, next)
    const read = this.size(first + 1, cleared) + (this.#loop.rounds[first] as LoopRound).call
    return this.#prices.cacheRead * read + this.#prices.cacheWrite5m * (this.size(request, next) - read)
  }

  #roundTokens(round: number, cleared: Cleared): number {
    const { call, result, clearedResult } = this.#loop.rounds[round] as LoopRound
    return call + (cleared[round] ? clearedResult : result)
  }

  #shrinks(round: number): boolean {
    const { result, clearedResult } = this.#loop.rounds[round] as LoopRound
    return clearedResult < result
  }

  /** Each round's need hazard as a request sees it (its class from the calls so far, its age); undefined without a floor on it. */
  #hazardsAt(request: number): Map<number, number> | undefined {
    if (this.#floor.maxNeedHazard === undefined) return undefined
    const known = this.#hazards.get(request)
    if (known) return known
    const seen = this.#loop.rounds.slice(0, request - 1)
    const risks = clearRisks(seen.flatMap((round) => round.tools ?? []))
    const hazards = new Map<number, number>()
    for (const [index, round] of seen.entries()) {
      // A round is cleared whole, so it may go only when every result in it may (its riskiest call decides).
      const age = seen.length - 1 - index
      const own = (round.tools ?? []).flatMap((tool) => {
        const risk = risks.get(tool.id)
        return risk === undefined ? [] : [hazardOf(risk, age)]
      })
      if (own.length > 0) hazards.set(index, Math.max(...own))
    }
    this.#hazards.set(request, hazards)
    return hazards
  }
}

/** For each round, the last round whose edit needs its read whole (restore.ts's rule, seen with hindsight). */
function neededByEdits(rounds: readonly LoopRound[]): number[] {
  const neededUntil = rounds.map(() => -1)
  const roundOf = new Map<string, number>()
  const calls: ToolCall[] = []
  for (const [index, round] of rounds.entries()) {
    const tools = round.tools ?? []
    for (const tool of tools) roundOf.set(tool.id, index)
    calls.push(...tools)
    for (const id of readsAnEditNeeds(calls, tools)) {
      const read = roundOf.get(id)
      if (read !== undefined && read < index) neededUntil[read] = index
    }
  }
  return neededUntil
}
