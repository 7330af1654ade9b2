import type { TokenEstimator } from './estimate.ts'
import { planRewrite } from './plan.ts'
import { detectPrefixBreak, prefixSignature, type PrefixBreak } from './prefix-break.ts'
import {
  noDecisions,
  type ChatView,
  type Edit,
  type FrozenDecisions,
  type RewritePolicy,
  type RewriteReport,
} from './types.ts'

/** What a conversation remembers of its previous request, as far as rewriting the next one needs. */
export interface ConversationMemory {
  readonly decisions: FrozenDecisions
  /** Index of the previous request's last message in its rewritten form (for a cache breakpoint). */
  readonly previousTail?: number
  /** The system-prompt note is on for this conversation (from its first edit on, then always). */
  readonly noteOn?: boolean
  /** How many messages the client sent last time, and a signature of them, to tell when it rewrote its history. */
  readonly messageCount?: number
  readonly prefixSignature?: string
}

/** The model's limits as they bear on this request. */
export interface RequestLimits {
  readonly window: number
  /** Prompt tokens to stay under from configuration and headers (output allowance already taken off). */
  readonly budget: number
  /** The prompt limit the upstream itself named in an earlier refusal, if any. */
  readonly learnedLimit?: number
}

/** The note ctxgate adds to the system prompt, and the tokens it adds there as the adapter writes it (0 when already there). */
export interface SystemNoteCost {
  readonly text: string
  readonly tokens: number
}

/**
 * Everything one rewrite decision depends on, by name. Coming inputs (prices per model, the
 * session's cadence: turns so far, time between requests, requests still expected) join here as
 * named fields, so no caller ever passes a positional flag.
 */
export interface PipelineInput {
  readonly view: ChatView
  /** Undefined on a conversation's first request, or when its state could not be read. */
  readonly memory: ConversationMemory | undefined
  readonly limits: RequestLimits
  readonly policy: RewritePolicy
  /** Calibration: estimates times this are an upper bound on the real count. */
  readonly factor: number
  readonly estimator: TokenEstimator
  /** Undefined when the note is turned off. */
  readonly note: SystemNoteCost | undefined
}

/** What the session stores for the next request (the tail comes from the adapter, once the edits are written). */
export type NextMemory = Omit<ConversationMemory, 'previousTail'>

export type PipelineOutcome =
  | { readonly kind: 'too-long'; readonly report: RewriteReport; readonly message: string }
  | {
      readonly kind: 'rewritten'
      readonly edits: readonly Edit[]
      readonly report: RewriteReport
      /** The system note goes into this request. */
      readonly noteOn: boolean
      readonly prefixBreak: PrefixBreak | undefined
      /** Where the previous request ended, for a cache breakpoint; undefined after a new cut made it meaningless. */
      readonly previousTail: number | undefined
      /** As sent by the client, the request would not have fit the model's window. */
      readonly refusalAvoided: boolean
      readonly next: NextMemory
    }

/** Share of a limit the upstream named that ctxgate plans to: its count and ours differ a little. */
const learnedLimitMargin = 0.97

/**
 * One request's rewrite, pure: the budget, the note's room in it, the plan (frozen decisions first,
 * then a batch when over), whether the note is on, whether the cache prefix broke and why, and what
 * to remember for the next request.
 */
export function runPipeline(input: PipelineInput): PipelineOutcome {
  const { view, memory, note } = input
  const budget = effectiveBudget(input.limits, view.maxOutputTokens)
  // Counted whether or not the note goes in yet, so turning it on never breaks the budget.
  const noteTokens = note?.tokens ?? 0
  const planned = planRewrite({
    // Not `{ ...view, headTokens }`: on Node 20 that gives every request's view its own hidden class.
    view: Object.assign({}, view, { headTokens: view.headTokens + noteTokens }),
    decisions: memory?.decisions ?? noDecisions,
    budget,
    policy: input.policy,
    factor: input.factor,
    estimator: input.estimator,
  })
  const report = planned.report
  if (planned.kind === 'too-long') return { kind: 'too-long', report, message: planned.message }
  // The note goes in with the first edit and stays: a conversation that never needs editing pays nothing for it.
  const noteOn =
    note !== undefined && (memory?.noteOn === true || report.folded + report.cleared + report.droppedMessages > 0)
  const newCut = report.newBatch && report.droppedMessages > 0
  return {
    kind: 'rewritten',
    edits: planned.edits,
    report,
    noteOn,
    prefixBreak: detectPrefixBreak({ previous: memory, view, report, noteOn }),
    previousTail: newCut ? undefined : memory?.previousTail,
    refusalAvoided: report.estimatedBefore + view.maxOutputTokens > input.limits.window,
    next: {
      decisions: planned.decisions,
      noteOn,
      messageCount: view.messages.length,
      prefixSignature: prefixSignature(view, view.messages.length),
    },
  }
}

/** Once the upstream has named its real limit, it wins over configuration (a window set too large). */
export function effectiveBudget(limits: RequestLimits, maxOutputTokens: number): number {
  return limits.learnedLimit === undefined
    ? limits.budget
    : Math.min(limits.budget, limits.learnedLimit * learnedLimitMargin - maxOutputTokens)
}
