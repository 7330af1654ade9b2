import { callsOfView, type ToolCall } from './clear-order.ts'
import {
  crowdedByRestores,
  reachBehindMarker,
  restoreToGiveUp,
  withoutCrowdingRestores,
  type PlanAttempt,
} from './crowded.ts'
import { frozenResults } from './frozen.ts'
import { inputClearRank, InputClearing } from './input-plan.ts'
import { forcedOrder, inUseRank } from './quoted.ts'
import { nothingToPlan } from './nothing-to-plan.ts'
import { newestWithin, planReport, tooLongMessage, type Replacement } from './plan-report.ts'
import { decisionsAfter, Restores } from './restore-state.ts'
import { clearedNote, clearedNoteFor, dropEdit, dropNoteTokens, foldSummaryOf, readFoldOf } from './notes.ts'
import { foldsReads, readFoldFor, readPathOf } from './read-fold.ts'
import { roundsNewerThan, type Rounds } from './rounds.ts'
import type { PlanInput } from './plan-input.ts'
import { viewFacts } from './view-facts.ts'
import { bestCut, cutStarts } from './drop-cuts.ts'
import type { Edit, FrozenDecisions, FrozenResult, RewriteOutcome, RewriteReport, ToolResultView } from './types.ts'

export type { PlanInput } from './plan-input.ts'

/**
 * Decides the edits for one request (docs/rewriting.md): re-apply frozen decisions first, then, only
 * when over budget, cut down to the low-water mark in one batch — fold and clear old results, least
 * likely to be needed again first, then drop whole user turns, then whole tool rounds — or report
 * that even one round cannot fit.
 */
export function planRewrite(input: PlanInput): RewriteOutcome {
  // A request the planner can only leave as it is skips its reading of the messages (nothing-to-plan.ts).
  return nothingToPlan(input) ?? planEveryStep(input)
}

/** Every step of the planner, whatever the request: what `nothingToPlan` is checked against. */
export function planEveryStep(input: PlanInput): RewriteOutcome {
  return withoutCrowdingRestores((givenUp) => {
    const attempt = planOnce(input, true, givenUp)
    // Nothing made room for what the agent uses: plan as if it had asked for nothing, so the attempt costs no edits.
    return attempt.restoresUndone ? { outcome: planOnce(input, false, givenUp).outcome } : attempt
  })
}

function planOnce(input: PlanInput, restoreOnUse: boolean, givenUp: ReadonlySet<string>): PlanAttempt {
  const state = new PlanState(input, restoreOnUse, givenUp)
  state.reapplyFrozen()
  const estimatedBefore = state.originalEstimate()
  if (input.batch) state.clearIds(input.batch)
  state.rideOnRestore()
  if (input.policy.strategy === 'eager-fold') state.foldOld()
  // A restore rewrites the cache from where it sits: one that leaves the request crowded is cut with, as a forced cut would.
  if (state.estimate() > input.budget || crowdedByRestores(state.estimate(), state.restores.madeNow(), input)) {
    const target = input.budget * input.policy.lowWater
    state.editByRisk(target, input.policy.strategy === 'batched-fold')
    if (state.estimate() > input.budget) state.dropUpTo(target, 'turns')
    if (state.estimate() > input.budget) state.dropUpTo(target, 'rounds')
  }
  const report = state.report(estimatedBefore)
  const outcome: RewriteOutcome =
    state.estimate() > input.budget
      ? { kind: 'too-long', report, message: tooLongMessage(state.estimate(), input.budget) }
      : { kind: 'rewritten', edits: state.edits(), decisions: state.decisions(), report }
  const crowding =
    outcome.kind === 'rewritten' ? restoreToGiveUp(state.estimate(), state.restores.madeNow(), input) : undefined
  return { outcome, restoresUndone: state.restores.allUndone(), crowding }
}

class PlanState {
  readonly #input: PlanInput
  readonly #messageTokens: number[]
  readonly #replacements = new Map<string, Replacement>()
  readonly #results: readonly ToolResultView[]
  readonly #rounds: Rounds
  readonly #minCallNeeded: readonly number[]
  readonly #originalTotal: number
  #total: number
  #dropTo = 1
  #dropScope: 'turns' | 'rounds' = 'turns'
  #dropFresh = false
  #dropNoteTokens = 0
  #clientEdited = false
  #clearedBehindMarker = false
  #calls: Map<string, ToolCall> | undefined
  /** Decisions by tool-result id: a Map, so ids like `constructor` or `__proto__` are only ever the client's own. */
  readonly #frozen: ReadonlyMap<string, FrozenResult>
  readonly #kept: Map<string, FrozenResult>
  readonly restores: Restores
  readonly #inputs: InputClearing

  constructor(input: PlanInput, restoreOnUse: boolean, givenUp: ReadonlySet<string>) {
    this.#input = input
    const { messages } = input.view
    this.#messageTokens = messages.map((message) => message.tokens)
    // Read of the messages alone, so carried from a recent request that shares them (view-facts.ts).
    const facts = viewFacts(messages)
    this.#results = facts.results
    this.#total = input.view.headTokens + this.#messageTokens.reduce((sum, tokens) => sum + tokens, 0)
    this.#originalTotal = this.#total
    this.#frozen = frozenResults(input.decisions)
    this.#kept = new Map(this.#frozen)
    this.restores = new Restores(input, this.#results, restoreOnUse, this.originalEstimate() > input.budget, givenUp)
    // Folding leaves the newest N rounds alone, counted as the economy counts them.
    this.#rounds = facts.rounds
    this.#minCallNeeded = facts.minCallNeeded
    this.#inputs = new InputClearing(input, facts.rounds, (message, delta) => this.#adjust(message, delta))
  }

  estimate(): number {
    return this.#total * this.#input.factor
  }

  originalEstimate(): number {
    return this.#originalTotal * this.#input.factor
  }

  reapplyFrozen(): void {
    this.#inputs.reapply()
    for (const result of this.#results) {
      const frozen = this.#frozen.get(result.id)
      if (!frozen) continue
      if (frozen.hash !== result.hash) {
        // The client changed this result since: the decision no longer describes these bytes.
        this.#kept.delete(result.id)
        this.#clientEdited = true
        continue
      }
      // The agent's newest message uses it (restore.ts): sent whole again; else as frozen.
      if (this.restores.restoreIfWanted(result)) this.#kept.delete(result.id)
      else this.#editAs(result, frozen.action, false)
    }
    const drop = this.#input.decisions.drop
    if (drop) {
      const message = this.#input.view.messages[drop.keepFrom]
      if (message && message.hash === drop.hash && this.#isCut(drop.keepFrom))
        this.#dropUntil(drop.keepFrom, drop.scope, false)
      else this.#clientEdited = true
    }
  }

  /** Nothing else made room for a restored result: it goes back to its frozen edit, as the previous request sent it. */
  #undoRestore(result: ToolResultView): void {
    const frozen = this.#frozen.get(result.id) as FrozenResult
    this.#kept.set(result.id, frozen)
    this.restores.undo(result.id)
    this.#editAs(result, frozen.action, false)
  }

  #editAs(result: ToolResultView, action: FrozenResult['action'], fresh: boolean): void {
    // A read fold needs the call to still be a read of a file; should the client change the call, it is cleared.
    const path = action === 'fold-read' ? readPathOf(this.#callOf(result)) : undefined
    if (path !== undefined) this.#replace(result, action, readFoldOf(result, path), fresh)
    else if (action === 'fold') this.#replace(result, action, foldSummaryOf(result), fresh)
    else this.#replace(result, 'clear', this.#clearedNote(result), fresh)
  }

  /** A restore rewrites the cache from where it sits: results after it the agent rarely needs go in the same rewrite. */
  rideOnRestore(): void {
    const riders = this.restores.riders(this.#input, this.#results, this.#rounds, this.#replacements, this.#dropTo)
    for (const result of riders) this.#replace(result, 'clear', this.#clearedNote(result), true)
  }

  /** Clear these results (unless already edited): a batch decided before planning, frozen like any other (folding them: docs/quality.md). */
  clearIds(ids: readonly string[]): void {
    const wanted = new Set(ids)
    for (const result of this.#results)
      if (wanted.has(result.id) && !this.#replacements.has(result.id) && !this.#isDropped(result.message))
        this.#replace(result, 'clear', this.#clearedNote(result), true)
  }

  /** Fold every large output older than the newest N rounds that is not already edited (of those `include` takes). */
  foldOld(include: (result: ToolResultView) => boolean = () => true): void {
    const { keepRecentRounds, foldMinTokens } = this.#input.policy
    for (const result of this.#results) {
      if (!include(result) || this.#replacements.has(result.id) || this.#isDropped(result.message)) continue
      if (result.tokens < foldMinTokens || this.#held(result)) continue
      if (roundsNewerThan(this.#rounds, result.id, result.message) < keepRecentRounds) continue
      this.#replace(result, 'fold', foldSummaryOf(result), true)
    }
  }

  /**
   * Fold (batched folding) and clear results, least likely needed first (clear-order.ts), a class at a
   * time, oldest first, until under target; old tool inputs go before `inputClearRank` (input-plan.ts).
   * Results quoted since (quoted.ts) go last, one at a time, never folded. The newest quarter stays.
   */
  editByRisk(target: number, fold: boolean): void {
    const isDropped = (message: number): boolean => this.#isDropped(message)
    const protectedIds = newestWithin(this.#results, this.#input.budget / 4, isDropped)
    const noteTokens = this.#input.estimator.text(clearedNote)
    const { rankOf, inOrder } = forcedOrder(this.#input.view.messages, this.restores.inUse())
    // Folded results are already small: clearing them would break the prefix again for little.
    const clearable = (result: ToolResultView): boolean =>
      !this.#replacements.has(result.id) &&
      !this.restores.isWanted(result.id) &&
      !protectedIds.has(result.id) &&
      !this.#isDropped(result.message) &&
      result.tokens >= noteTokens * 2
    for (let level = 0; level <= inUseRank && this.estimate() > target; level++) {
      if (level === inputClearRank) this.#inputs.clearOld(() => this.estimate() > target, isDropped)
      const inUse = level === inUseRank
      if (fold && !inUse) this.foldOld((result) => rankOf(result) === level)
      const candidates = this.#results.filter(
        (result) => rankOf(result) === level && clearable(result) && !this.#held(result),
      )
      // Reads are folded rather than cleared, except those in use: folding them cost the long set events (BENCHMARKS.md, round 11).
      const foldReads = !inUse && foldsReads(this.#input.policy)
      this.#clearInBatches(inOrder(candidates), target, inUse ? 1 : this.#input.policy.clearBatch, foldReads)
    }
    // Still over the budget with read folds: they go first, before results behind the marker and whole turns.
    if (this.estimate() > this.#input.budget) this.#clearReadFolds(inOrder, target)
    // Still over, or crowded (crowded.ts): results before the marker are cheaper to give up than turns or a cut each request.
    const held = this.#results.filter((result) => clearable(result) && this.#held(result))
    if (reachBehindMarker(this.estimate(), held, noteTokens, this.#input)) {
      this.#clearedBehindMarker = true
      this.#clearInBatches(inOrder(held), target, this.#input.policy.clearBatch)
    }
    // Still over: what the agent's newest message uses goes too, one at a time, before whole turns do.
    const wanted = this.restores.wantedLeft(this.#results.filter((result) => !this.#replacements.has(result.id)))
    for (const result of inOrder(wanted)) {
      if (this.estimate() <= this.#input.budget) break
      if (this.restores.restoredNow(result.id)) this.#undoRestore(result)
      else if (clearable(result)) this.#replace(result, 'clear', this.#clearedNote(result), true)
    }
  }

  /** The cleared note naming how to get this result back (notes.ts). */
  #clearedNote(result: ToolResultView): string {
    return clearedNoteFor(this.#callOf(result))
  }

  #callOf(result: ToolResultView): ToolCall | undefined {
    this.#calls ??= new Map(callsOfView(this.#input.view.messages).map((call) => [call.id, call]))
    return this.#calls.get(result.id)
  }

  #clearReadFolds(inOrder: <T extends { readonly id: string }>(results: readonly T[]) => T[], target: number): void {
    const isFold = (result: ToolResultView): boolean =>
      this.#replacements.get(result.id)?.edit.action === 'fold-read' && !this.#held(result)
    for (const result of inOrder(this.#results.filter(isFold))) {
      if (this.estimate() <= target) break
      this.#replace(result, 'clear', this.#clearedNote(result), true)
    }
  }

  #held = (result: ToolResultView): boolean => result.message < (this.#input.editableFrom ?? 0)

  #clearInBatches(candidates: readonly ToolResultView[], target: number, batch: number, foldReads = false): void {
    for (let start = 0; start < candidates.length && this.estimate() > target; start += batch) {
      for (const result of candidates.slice(start, start + batch)) {
        const fold = foldReads ? readFoldFor(result, this.#callOf(result), this.#input.estimator) : undefined
        if (fold !== undefined) this.#replace(result, 'fold-read', fold, true)
        else this.#replace(result, 'clear', this.#clearedNote(result), true)
      }
    }
  }

  /** Keep the first message, a note, and the newest whole user turns (or, inside one long turn, rounds) that fit. */
  dropUpTo(target: number, scope: 'turns' | 'rounds'): void {
    if (this.#input.view.messages[0]?.role !== 'user') return
    const cuts = cutStarts(this.#input.view.messages, this.#dropTo, (index) => this.#isCut(index), scope)
    const cut = bestCut(cuts, {
      from: this.#dropTo,
      totalWithoutNote: this.#total - this.#dropNoteTokens,
      messageTokens: this.#messageTokens,
      noteTokens: (at) => dropNoteTokens(this.#input, scope, at - 1),
      factor: this.#input.factor,
      target,
    })
    if (cut !== undefined) this.#dropUntil(cut, scope, true)
  }

  edits(): Edit[] {
    const edits: Edit[] = [...this.#replacements.values()].map((entry) => entry.edit)
    edits.push(...this.#inputs.edits())
    if (this.#dropTo > 1) edits.push(dropEdit(this.#dropScope, this.#dropTo))
    return edits
  }

  decisions(): FrozenDecisions {
    return decisionsAfter({
      kept: this.#kept,
      frozen: this.#frozen,
      replacements: this.#replacements.values(),
      request: this.#input.request,
      restores: this.restores,
      drop: this.#dropTo > 1 ? { keepFrom: this.#dropTo, scope: this.#dropScope } : undefined,
      messages: this.#input.view.messages,
      inputs: this.#inputs.decisions(),
    })
  }

  report(estimatedBefore: number): RewriteReport {
    return planReport({
      estimatedBefore,
      estimatedAfter: this.estimate(),
      budget: this.#input.budget,
      replacements: this.#replacements.values(),
      isDropped: (message) => this.#isDropped(message),
      dropTo: this.#dropTo,
      dropFresh: this.#dropFresh,
      messageTokens: this.#messageTokens,
      dropNoteTokens: this.#dropNoteTokens,
      clientEdited: this.#clientEdited || this.#inputs.clientEdited,
      inputs: this.#inputs.replacements(),
      clearedBehindMarker: this.#clearedBehindMarker,
      restoredMessages: this.restores.messages(),
    })
  }

  /** `delta` tokens more in one message (and in the total, unless it is dropped). */
  #adjust(message: number, delta: number): void {
    this.#messageTokens[message] = (this.#messageTokens[message] as number) + delta
    if (!this.#isDropped(message)) this.#total += delta
  }

  #replace(result: ToolResultView, action: FrozenResult['action'], text: string, fresh: boolean): void {
    const previous = this.#replacements.get(result.id)
    const before = previous ? this.#input.estimator.text(previous.edit.text) : result.tokens
    const after = this.#input.estimator.text(text)
    this.#adjust(result.message, after - before)
    this.#replacements.set(result.id, {
      edit: { kind: 'replace-tool-result', id: result.id, action, text },
      result,
      fresh: fresh || (previous?.fresh ?? false),
      saved: result.tokens - after,
    })
  }

  #isDropped(message: number): boolean {
    return message >= 1 && message < this.#dropTo
  }

  #isCut(index: number): boolean {
    return index >= 1 && index < this.#input.view.messages.length && (this.#minCallNeeded[index] as number) >= index
  }

  #dropUntil(cut: number, scope: 'turns' | 'rounds', fresh: boolean): void {
    let removed = 0
    for (let index = this.#dropTo; index < cut; index++) removed += this.#messageTokens[index] as number
    const noteTokens = dropNoteTokens(this.#input, scope, cut - 1)
    this.#total += noteTokens - this.#dropNoteTokens - removed
    this.#dropNoteTokens = noteTokens
    this.#dropTo = cut
    this.#dropScope = scope
    this.#dropFresh ||= fresh
  }
}
