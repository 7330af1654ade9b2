/**
 * Where the conversation's next batch of edits will start: the oldest tool result still sent whole
 * that a batch could replace. Everything before it stays byte-stable until then, so a cache marker
 * just ahead of it lets that batch read the prefix instead of writing it again.
 */
import { belowBudgetMaxHazard, hazardOf, resultHazards, resultRiskAges } from './clear-order.ts'
import { batchStart, type EditPointPrices } from './economy/edit-point.ts'
import { frozenDropKeepFrom, restoredResults } from './frozen.ts'
import type { ChatView, FrozenDecisions } from './types.ts'

export interface NextEditInput {
  readonly view: ChatView
  /** The decisions frozen before this request: a batch made now starts at the result they leave first. */
  readonly decisions: FrozenDecisions
  /** Results this small are never replaced: their note would not be smaller. */
  readonly replacementTokens: number
  /** Results smaller than this are not where the next edit comes (eager folding folds only larger ones). */
  readonly minTokens?: number
  /** Tools whose results are never cleared. */
  readonly excludeTools: readonly string[]
  /** Results needed again more often than this per request are passed over below budget (clear-order.ts). */
  readonly maxNeedHazard?: number
  /** Prices to weigh reaching back with (economy/edit-point.ts): old results too small to pay for it are passed over. */
  readonly prices?: EditPointPrices
  /** Results in messages before this one are passed over: a marker there could not be written fresh now. */
  readonly fromMessage?: number
  /** Judge each result by the hazard it will have once old, not today's: where a batch may start later on. */
  readonly eventually?: boolean
  /** With `eventually`: the hazard it will have this many rounds from now (default: once old). */
  readonly lookAhead?: number
}

interface Candidate {
  readonly id: string
  readonly saved: number
  /** Tokens sent before its message. */
  readonly position: number
}

/** The id of that result, or undefined when no result could ever be replaced. */
export function nextEditResult(input: NextEditInput): string | undefined {
  const { view, decisions } = input
  const excluded = new Set(input.excludeTools)
  const results = decisions.results as Readonly<Record<string, { readonly hash?: unknown } | undefined>>
  const firstSent = frozenDropKeepFrom(decisions, view) ?? 0
  // No result left to replace (a short request, a chat with no tools): none of the reading below can find one.
  if (!view.messages.some((message, index) => index >= firstSent && message.toolResults.length > 0)) return undefined
  const restored = restoredResults(decisions)
  const toolOf = excluded.size > 0 ? callTools(view) : undefined
  // A batch below budget passes over results the agent is likely to need again (clear-order.ts).
  const hazards = input.eventually ? eventualHazards(view, input.lookAhead) : resultHazards(view.messages)
  const candidates: Candidate[] = []
  let position = 0
  for (let index = firstSent; index < view.messages.length; index++) {
    const message = view.messages[index]
    if (!message) continue
    let sent = message.tokens
    for (const result of message.toolResults) {
      if (Object.hasOwn(results, result.id) && results[result.id]?.hash === result.hash) {
        sent -= Math.max(0, result.tokens - input.replacementTokens)
        continue
      }
      if (result.tokens <= input.replacementTokens || result.tokens < (input.minTokens ?? 0)) continue
      if (restored.get(result.id)?.hash === result.hash) continue
      if (toolOf && excluded.has(toolOf.get(result.id) ?? '')) continue
      if ((hazards.get(result.id) ?? 0) > (input.maxNeedHazard ?? belowBudgetMaxHazard)) continue
      if (index < (input.fromMessage ?? 0)) continue
      candidates.push({ id: result.id, saved: result.tokens - input.replacementTokens, position })
      // Without prices the oldest candidate is the answer: no need to look further.
      if (!input.prices) return result.id
    }
    position += sent
  }
  if (!input.prices || candidates.length === 0) return undefined
  const start = batchStart(
    candidates.length,
    (index) => (candidates[index] as Candidate).saved,
    (index) => (candidates[index] as Candidate).position,
    input.prices,
  )
  return candidates[start]?.id
}

function eventualHazards(view: ChatView, lookAhead = Number.POSITIVE_INFINITY): Map<string, number> {
  const hazards = new Map<string, number>()
  for (const [id, { risk, age }] of resultRiskAges(view.messages)) hazards.set(id, hazardOf(risk, age + lookAhead))
  return hazards
}

function callTools(view: ChatView): Map<string, string> {
  const tools = new Map<string, string>()
  for (const message of view.messages)
    message.toolCallIds.forEach((id, position) => tools.set(id, message.toolCallNames?.[position] ?? ''))
  return tools
}
