/**
 * The policies the simulator compares: today's budget-only clearing (approximated), the simple
 * trigger-and-target baseline, and the cache-priced decision of src/rewrite/economy.
 */
import { estimateCadence, type Cadence } from '../../src/rewrite/economy/cadence.ts'
import { decideBatch, eligibleResults, totalTokens } from '../../src/rewrite/economy/decide.ts'
import { defaultMultipliers } from '../../src/billing/prices.ts'
import { defaultEconomyPolicy, type EconomyPolicy, type ResultCost } from '../../src/rewrite/economy/types.ts'
import type { Policy, PolicyContext } from './simulate.ts'

export const direct: Policy = { name: 'direct', proxied: false, note: 'none', decide: () => [] }

/** Clears oldest-first from `candidates` until the conversation is at or under `target`. */
function clearUntil(total: number, candidates: readonly ResultCost[], target: number, step = 1): string[] {
  const ids: string[] = []
  for (let start = 0; start < candidates.length && total > target; start += step) {
    for (const result of candidates.slice(start, start + step)) {
      ids.push(result.id)
      total -= result.tokens - result.replacementTokens
    }
  }
  return ids
}

/** Today: only over budget, batches of 4 down to 60% of it; the newest results within a quarter of the budget stay. */
export function budgetOnly(note: Policy['note'] = 'first-edit'): Policy {
  return {
    name: 'budget-only',
    proxied: true,
    note,
    decide({ conversation }) {
      const total = totalTokens(conversation)
      if (total <= conversation.budget) return []
      const results = conversation.messages.flatMap((message) => message.results)
      const kept = new Set<string>()
      let tokens = 0
      for (const result of results.toReversed()) {
        tokens += result.tokens
        if (kept.size > 0 && tokens > conversation.budget / 4) break
        kept.add(result.id)
      }
      const candidates = results.filter(
        (result) => !kept.has(result.id) && result.tokens >= result.replacementTokens * 2,
      )
      return clearUntil(total, candidates, conversation.budget * 0.6, 4)
    },
  }
}

/** The baseline: past `start` tokens (or over budget) clear the oldest results down to `target`, newest 3 rounds kept. */
export function triggerTarget(start: number, target: number, note: Policy['note'] = 'first-edit'): Policy {
  return {
    name: `trigger ${start / 1000}k→${target / 1000}k`,
    proxied: true,
    note,
    decide({ conversation }) {
      const total = totalTokens(conversation)
      if (total <= Math.min(start, conversation.budget)) return []
      const candidates = eligibleResults(conversation, { ...defaultEconomyPolicy, excludeTools: [] })
      return clearUntil(total, candidates, target)
    },
  }
}

/** Lindy (the session's own length), the run's true remaining count, or finished sessions' lengths with an optional floor. */
export type RemainingEstimate = 'lindy' | 'exact' | { readonly finished: readonly number[]; readonly floor?: number }

export function cadenceFor(context: PolicyContext, remaining: RemainingEstimate): Cadence {
  const sizes = context.originalSizes
  const growth = sizes.slice(1).map((size, index) => size - (sizes[index] as number))
  const cadence = estimateCadence({
    requestsSoFar: context.request,
    growth: growth.slice(-16),
    gapsMs: [],
    finishedLengths: typeof remaining === 'object' ? remaining.finished : [],
  })
  if (remaining === 'exact') return { ...cadence, expectedRemaining: context.requestsInRun - context.request }
  const floor = typeof remaining === 'object' ? (remaining.floor ?? 0) : 0
  return { ...cadence, expectedRemaining: Math.max(floor, cadence.expectedRemaining) }
}

export function cachePriced(
  policy: Partial<EconomyPolicy>,
  remaining: RemainingEstimate = 'lindy',
  note: Policy['note'] = 'first-edit',
  name = 'cache-priced',
): Policy {
  const full = { ...defaultEconomyPolicy, ...policy }
  return {
    name,
    proxied: true,
    note,
    decide(context) {
      const decision = decideBatch({
        conversation: context.conversation,
        cadence: cadenceFor(context, remaining),
        prices: defaultMultipliers,
        policy: full,
      })
      return decision.kind === 'batch' ? decision.ids : []
    },
  }
}
