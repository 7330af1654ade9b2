/**
 * One request's restores on use (restore.ts), as the planner keeps them: what the agent's newest
 * message shows it needs, the results restored before (frozen as restored) and on this request,
 * and the record the next request reads back.
 */
import { belowBudgetMaxHazard, resultHazards } from './clear-order.ts'
import { frozenDropKeepFrom, restoredResults } from './frozen.ts'
import { clearedNote } from './notes.ts'
import type { PlanInput } from './plan-input.ts'
import { newestWithin, type Replacement } from './plan-report.ts'
import { wantedBack } from './restore.ts'
import { roundsNewerThan, type Rounds } from './rounds.ts'
import type { FrozenDecisions, FrozenDrop, FrozenResult, MessageView, RestoredResult, ToolResultView } from './types.ts'

export class Restores {
  readonly #request: number | undefined
  /** Restored on earlier requests, and on this one: sent whole, cleared again only when forced. */
  readonly #restored: Map<string, RestoredResult>
  readonly #now = new Map<string, ToolResultView>()
  #tried = 0
  /** Results before this message are not restored (the cache rewrite would not pay, plan-input.ts). */
  readonly #reach: number
  /** What the newest message needs: kept whole when a cut is forced, unless nothing else makes room. */
  #wanted: ReadonlySet<string>

  /**
   * `enabled` false: nothing is wanted (no restore, nothing kept whole for the newest message).
   * `givenUp`: wanted results whose restore an earlier plan of this request gave up (plan.ts): they stay as frozen.
   */
  constructor(
    input: PlanInput,
    results: readonly ToolResultView[],
    enabled: boolean,
    overBudget: boolean,
    givenUp: ReadonlySet<string> = new Set(),
  ) {
    this.#request = input.request
    this.#reach = overBudget ? 0 : (input.restoreBelowBudgetFrom ?? 0)
    this.#restored = restoredResults(input.decisions)
    // A client that changed a restored result since: the record no longer describes these bytes.
    for (const result of results)
      if (this.#restored.has(result.id) && this.#restored.get(result.id)?.hash !== result.hash)
        this.#restored.delete(result.id)
    const wanted = enabled ? wantedOutsideDrop(input, results, overBudget) : new Set<string>()
    for (const id of givenUp) wanted.delete(id)
    this.#wanted = wanted
  }

  isWanted(id: string): boolean {
    return this.#wanted.has(id)
  }

  /** Results restored now or before, which a forced cut clears after every other class. */
  inUse(): ReadonlySet<string> {
    return new Set(this.#restored.keys())
  }

  /** The frozen result is wanted: un-frozen, sent whole from this request on (a new edit, like a batch). */
  restoreIfWanted(result: ToolResultView): boolean {
    if (!this.#wanted.has(result.id) || result.message < this.#reach) return false
    this.#now.set(result.id, result)
    this.#tried++
    this.#restored.set(result.id, { hash: result.hash, ...(this.#request ? { at: this.#request } : {}) })
    return true
  }

  restoredNow(id: string): boolean {
    return this.#now.has(id)
  }

  /** Nothing else made room for it: it goes back to its frozen edit. */
  undo(id: string): void {
    this.#now.delete(id)
    this.#restored.delete(id)
  }

  /** What a forced cut may still clear, least needed first, once every other result is gone. */
  wantedLeft(results: readonly ToolResultView[]): ToolResultView[] {
    const left = results.filter((result) => this.#wanted.has(result.id))
    this.#wanted = new Set()
    return left
  }

  /** Restores were tried on this request and every one was given up. */
  allUndone(): boolean {
    return this.#tried > 0 && this.#now.size === 0
  }

  messages(): number[] {
    return [...this.#now.values()].map((result) => result.message)
  }

  /** The results restored on this request (sent whole again, a new edit where each sits). */
  madeNow(): ToolResultView[] {
    return [...this.#now.values()]
  }

  /**
   * Results after the earliest one restored now that a below-budget batch could take (the agent
   * needs them again at most 1% of the time per request, clear-order.ts), outside the newest
   * rounds and the newest quarter of the budget: the restore writes them again anyway, so clearing
   * them costs no rewrite of its own and spares a later one.
   */
  riders(
    input: PlanInput,
    results: readonly ToolResultView[],
    rounds: Rounds,
    replaced: ReadonlyMap<string, unknown>,
    dropTo: number,
  ): ToolResultView[] {
    const isDropped = (message: number): boolean => message >= 1 && message < dropTo
    const edited = (result: ToolResultView): boolean => replaced.has(result.id) || isDropped(result.message)
    const from = Math.min(...this.messages())
    if (!Number.isFinite(from)) return []
    const hazards = resultHazards(input.view.messages)
    const newest = newestWithin(results, input.budget / 4, isDropped)
    const minTokens = input.estimator.text(clearedNote) * 2
    return results.filter(
      (result) =>
        result.message > from &&
        !edited(result) &&
        !this.#wanted.has(result.id) &&
        !this.#restored.has(result.id) &&
        !newest.has(result.id) &&
        result.tokens >= minTokens &&
        (hazards.get(result.id) ?? 1) <= belowBudgetMaxHazard &&
        roundsNewerThan(rounds, result.id, result.message) >= input.policy.keepRecentRounds,
    )
  }

  /** The record for the next request; a restored result cleared again is frozen as cleared, no longer as restored. */
  decisions(kept: ReadonlyMap<string, FrozenResult>): Pick<FrozenDecisions, 'restored'> {
    const entries = [...this.#restored].filter(([id]) => !kept.has(id))
    return entries.length > 0 ? { restored: Object.fromEntries(entries) } : {}
  }
}

/** What the newest message needs, outside a frozen drop (those messages are not sent at all). */
function wantedOutsideDrop(input: PlanInput, results: readonly ToolResultView[], overBudget: boolean): Set<string> {
  const keepFrom = frozenDropKeepFrom(input.decisions, input.view) ?? 1
  const wanted = wantedBack(input.view.messages, overBudget)
  for (const result of results) if (result.message >= 1 && result.message < keepFrom) wanted.delete(result.id)
  return wanted
}

export interface DecisionsAfter {
  readonly kept: ReadonlyMap<string, FrozenResult>
  readonly frozen: ReadonlyMap<string, FrozenResult>
  readonly replacements: Iterable<Replacement>
  readonly request: number | undefined
  readonly restores: Restores
  readonly drop: Omit<FrozenDrop, 'hash'> | undefined
  readonly messages: readonly MessageView[]
  /** Old tool inputs cleared (input-plan.ts). */
  readonly inputs?: Pick<FrozenDecisions, 'inputs'>
}

/** What the session stores after this request: frozen edits (each with the request that made it), the drop, the restores. */
export function decisionsAfter(plan: DecisionsAfter): FrozenDecisions {
  const kept = new Map(plan.kept)
  for (const { edit, result, fresh } of plan.replacements) {
    const at = fresh ? plan.request : plan.frozen.get(edit.id)?.at
    kept.set(edit.id, { hash: result.hash, action: edit.action, ...(typeof at === 'number' ? { at } : {}) })
  }
  // Own properties only (`__proto__` included), in the JSON shape sessions are stored in.
  const results: Record<string, FrozenResult> = Object.fromEntries(kept)
  const restored = plan.restores.decisions(kept)
  const keep = plan.drop ? plan.messages[plan.drop.keepFrom] : undefined
  const inputs = plan.inputs ?? {}
  return plan.drop && keep
    ? { results, ...inputs, drop: { ...plan.drop, hash: keep.hash }, ...restored }
    : { results, ...inputs, ...restored }
}
