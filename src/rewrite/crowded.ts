import type { PlanInput } from './plan-input.ts'
import { forcedOrder } from './quoted.ts'
import type { RewriteOutcome, ToolResultView } from './types.ts'

/**
 * Above this share of the way from the low-water mark (where a forced cut aims) to the budget, a
 * request is crowded: the next few requests' growth takes it over the budget again, and every cut
 * is a cache rewrite. On a public run at a 64k window, a restore that fit just under the budget and
 * forced cuts that stopped just under it (the rest held behind the cache marker) made a cut on each
 * of the next requests (docs/economy.md, "Crowded requests").
 */
export const crowdedShare = 0.5

type Limits = Pick<PlanInput, 'budget' | 'policy' | 'factor'>

/** The estimate above which a request is crowded. */
export function crowdedAbove(input: Limits): number {
  const target = input.budget * input.policy.lowWater
  return target + (input.budget - target) * crowdedShare
}

/**
 * A forced cut clears results held behind the cache marker when the request is still over the
 * budget, or still crowded and clearing them takes it out: a rewrite from far back that leaves it
 * crowded would not spare the next cut.
 */
export function reachBehindMarker(
  estimate: number,
  held: readonly ToolResultView[],
  noteTokens: number,
  input: Limits,
): boolean {
  if (held.length === 0) return false
  if (estimate > input.budget) return true
  const saving = held.reduce((sum, result) => sum + Math.max(0, result.tokens - noteTokens), 0) * input.factor
  return estimate > crowdedAbove(input) && estimate - saving <= crowdedAbove(input)
}

/** Restores made on this request leave it crowded: it is cut with them, and failing that they are given up (plan.ts). */
export function crowdedByRestores(estimate: number, restoredNow: readonly ToolResultView[], input: Limits): boolean {
  return restoredNow.length > 0 && estimate > crowdedAbove(input)
}

/**
 * The restore to give up next when those made on this request leave it crowded after the cut: the
 * least needed of them, in a forced cut's order (quoted.ts). The planner plans again without it
 * until the request is out of crowded; each restore is weighed on its own, so one that fits below
 * the line is still made.
 */
export function restoreToGiveUp(
  estimate: number,
  restoredNow: readonly ToolResultView[],
  input: Limits & Pick<PlanInput, 'view'>,
): ToolResultView | undefined {
  if (!crowdedByRestores(estimate, restoredNow, input)) return undefined
  const { inOrder } = forcedOrder(input.view.messages, new Set(restoredNow.map((result) => result.id)))
  return inOrder(restoredNow)[0]
}

/** One plan of a request, and the restore it made that leaves it crowded (restoreToGiveUp), if any. */
export interface PlanAttempt {
  readonly outcome: RewriteOutcome
  readonly restoresUndone?: boolean
  readonly crowding?: ToolResultView | undefined
}

/**
 * Plans with every restore, then gives up the one `plan` names as leaving the request crowded and
 * plans again, until none does: at most one plan more per restore the agent asked for.
 */
export function withoutCrowdingRestores(plan: (givenUp: ReadonlySet<string>) => PlanAttempt): RewriteOutcome {
  const givenUp = new Set<string>()
  for (;;) {
    const attempt = plan(givenUp)
    if (attempt.crowding === undefined) return attempt.outcome
    givenUp.add(attempt.crowding.id)
  }
}
