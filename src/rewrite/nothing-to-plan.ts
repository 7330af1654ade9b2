import { planReport } from './plan-report.ts'
import { messagesTokens } from './prompt-tokens.ts'
import type { PlanInput } from './plan-input.ts'
import type { FrozenDecisions, RewriteOutcome } from './types.ts'

/**
 * The plan of a request the planner can only leave as it is, found without the planner's reading of
 * the messages (tool results, inputs, rounds, restores): nothing frozen to apply again, no batch asked for,
 * no eager folding, and the whole request within the budget. Then no step of `planRewrite` edits
 * anything, and this is the outcome it returns, field for field (test/property/nothing-to-plan).
 * Undefined whenever the planner could do anything: it plans as before.
 */
export function nothingToPlan(input: PlanInput): RewriteOutcome | undefined {
  if ((input.batch?.length ?? 0) > 0 || input.policy.strategy === 'eager-fold') return undefined
  if (!holdsNoDecision(input.decisions)) return undefined
  const { view, factor } = input
  // Summed as the planner sums it, so the estimate is the same number to the last bit.
  const estimate = (view.headTokens + messagesTokens(view.messages)) * factor
  if (!(estimate <= input.budget)) return undefined
  const report = planReport({
    estimatedBefore: estimate,
    estimatedAfter: estimate,
    budget: input.budget,
    replacements: [],
    isDropped: () => false,
    dropTo: 1,
    dropFresh: false,
    messageTokens: [],
    dropNoteTokens: 0,
    clientEdited: false,
    clearedBehindMarker: false,
    restoredMessages: [],
  })
  return { kind: 'rewritten', edits: [], decisions: { results: {} }, report }
}

/** No frozen result, input, drop or restore: the conversation's memory asks nothing of the planner (a malformed entry counts as none, as there). */
export function holdsNoDecision(decisions: FrozenDecisions): boolean {
  return (
    !decisions.drop &&
    ownKeys(decisions.results) === 0 &&
    ownKeys(decisions.inputs) === 0 &&
    ownKeys(decisions.restored) === 0
  )
}

function ownKeys(record: unknown): number {
  return typeof record === 'object' && record !== null ? Object.keys(record).length : 0
}
