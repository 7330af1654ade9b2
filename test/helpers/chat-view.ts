import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { systemNote } from '../../src/rewrite/notes.ts'
import {
  runPipeline,
  type ConversationMemory,
  type PipelineInput,
  type PipelineOutcome,
} from '../../src/rewrite/pipeline.ts'
import { planRewrite, type PlanInput } from '../../src/rewrite/plan.ts'
import {
  noDecisions,
  type ChatView,
  type MessageView,
  type RewriteOutcome,
  type RewritePolicy,
} from '../../src/rewrite/types.ts'

/** One step of a hand-written conversation view: a tool round (call + results) or a user turn. */
export type ViewStep =
  | { readonly kind: 'round'; readonly ids: readonly string[]; readonly resultTokens: number; readonly text?: string }
  | { readonly kind: 'turn'; readonly tokens?: number }

/** A round of calls whose results are `resultTokens` each. */
export const viewRound = (resultTokens: number, ...ids: string[]): ViewStep => ({ kind: 'round', ids, resultTokens })
export const viewTurn: ViewStep = { kind: 'turn' }

const message = (fields: Partial<MessageView> & Pick<MessageView, 'role' | 'tokens' | 'hash'>): MessageView => ({
  startsUserTurn: false,
  toolCallIds: [],
  toolResults: [],
  hasThinking: false,
  ...fields,
})

/**
 * A provider-neutral view built by hand, so planner and pipeline tests need no adapter: the task
 * (20 tokens), then each step; a result's hash is its id and size, so changing a size is a client edit.
 */
export function viewOf(steps: readonly ViewStep[], options: { headTokens?: number; maxOutputTokens?: number } = {}) {
  const messages: MessageView[] = [message({ role: 'user', tokens: 20, hash: 'task', startsUserTurn: true })]
  steps.forEach((step, index) => {
    if (step.kind === 'turn') {
      messages.push(message({ role: 'assistant', tokens: step.tokens ?? 10, hash: `done-${index}` }))
      messages.push(message({ role: 'user', tokens: 10, hash: `next-${index}`, startsUserTurn: true }))
      return
    }
    messages.push(message({ role: 'assistant', tokens: 15, hash: `calls-${index}`, toolCallIds: step.ids }))
    const at = messages.length
    const text = step.text ?? 'exit status 0\nbuild ok\n'.repeat(Math.ceil(step.resultTokens / 4))
    const toolResults = step.ids.map((id) => ({
      id,
      message: at,
      tokens: step.resultTokens,
      hash: `${id}:${step.resultTokens}`,
      text,
    }))
    const tokens = 4 + step.ids.length * (3 + step.resultTokens)
    messages.push(message({ role: 'user', tokens, hash: `results-${index}-${step.resultTokens}`, toolResults }))
  })
  const view: ChatView = {
    model: 'test-model',
    headTokens: options.headTokens ?? 100,
    messages,
    maxOutputTokens: options.maxOutputTokens ?? 0,
  }
  return view
}

/** Total estimated tokens of a view (head and messages). */
export const viewTokens = (view: ChatView): number =>
  view.headTokens + view.messages.reduce((sum, entry) => sum + entry.tokens, 0)

/** What the Anthropic adapter's view adds for a drop note's block (`ChatAdapter.dropNoteFraming`). */
export const testDropNoteFraming = 3

export const testPolicy: RewritePolicy = {
  strategy: 'clear-only',
  keepRecentRounds: 3,
  foldMinTokens: 300,
  clearBatch: 4,
  lowWater: 0.6,
}

const pipelineEstimator = new TokenEstimator()

/**
 * One request through the pure pipeline with the tests' defaults (20k window, 10k budget, the test
 * policy, factor 1, the system note at 90 tokens); throws unless it was rewritten.
 */
export function runRewritten(
  view: ChatView,
  memory: ConversationMemory | undefined,
  overrides: Partial<PipelineInput> = {},
): Extract<PipelineOutcome, { kind: 'rewritten' }> {
  const outcome = runPipeline({
    view,
    memory,
    limits: { window: 20_000, budget: 10_000 },
    policy: testPolicy,
    factor: 1,
    estimator: pipelineEstimator,
    note: { text: systemNote, tokens: 90 },
    dropNoteFraming: testDropNoteFraming,
    ...overrides,
  })
  if (outcome.kind !== 'rewritten') throw new Error(`expected a rewrite, got: ${outcome.message}`)
  return outcome
}

/** One tool round's call: its id, tool name, input, the result's text and, when given, its tokens. */
export type NamedCall = readonly [id: string, name: string, input: unknown, text: string, tokens?: number]

/** Rounds of one call each, with names, inputs and result texts, on the shared test view (`tokens` where a call gives none). */
export function viewWithCalls(calls: readonly NamedCall[], tokens = 1_000): ChatView {
  const base = viewOf(calls.map(([id, , , text, own]) => ({ ...viewRound(own ?? tokens, id), text })))
  return {
    ...base,
    messages: base.messages.map((message): MessageView => {
      const call = calls.find(([id]) => message.toolCallIds[0] === id)
      return call ? { ...message, toolCallNames: [call[1]], toolCallInputs: [call[2]] } : message
    }),
  }
}

/** The planner on a view with the tests' defaults: nothing frozen, the test policy, factor 1. */
export const planView = (view: ChatView, budget: number, overrides: Partial<PlanInput> = {}): RewriteOutcome =>
  planRewrite({
    view,
    decisions: noDecisions,
    budget,
    policy: testPolicy,
    factor: 1,
    estimator: pipelineEstimator,
    dropNoteFraming: testDropNoteFraming,
    ...overrides,
  })

/** The outcome, when the plan rewrote the request; throws with the planner's message otherwise. */
export function rewrittenOf(outcome: RewriteOutcome): Extract<RewriteOutcome, { kind: 'rewritten' }> {
  if (outcome.kind !== 'rewritten') throw new Error(`expected a rewrite, got: ${outcome.message}`)
  return outcome
}
