import type { TokenEstimator } from './estimate.ts'
import type { ChatView, FrozenDecisions, RewritePolicy } from './types.ts'

/** What the planner decides one request's edits from (plan.ts). */
export interface PlanInput {
  readonly view: ChatView
  readonly decisions: FrozenDecisions
  /** Prompt tokens the rewritten request must stay under (output allowance already taken off). */
  readonly budget: number
  readonly policy: RewritePolicy
  /** Calibration: multiply estimates by this to get an upper bound on the real count. */
  readonly factor: number
  readonly estimator: TokenEstimator
  /** Results to clear on this request whatever the budget: a batch the cache-priced economy decided. */
  readonly batch?: readonly string[]
  /**
   * Message of the result the previous request kept its cache marker ahead of: new edits start there
   * or later, so a batch reads the prefix before it; only if nothing else makes the request fit do
   * edits reach further back. Undefined: no such promise (no marker, a cold cache, the note joining the head).
   */
  readonly editableFrom?: number
  /** This request's number in its session: stored with each new decision, so re-fetches are counted within a window of it. */
  readonly request?: number
  /**
   * Below budget, results are restored on use (restore.ts) only from this message on: a restore
   * rewrites the cache from where it sits, so the pipeline lets it ride on a rewrite already paid
   * for (a cold cache: 0; a batch: its edit point; otherwise none). Over budget, and when unset,
   * anything the agent uses is restored.
   */
  readonly restoreBelowBudgetFrom?: number
  /** Tokens the adapter's view counts for a drop note beyond its text (`ChatAdapter.dropNoteFraming`). */
  readonly dropNoteFraming: number
}
