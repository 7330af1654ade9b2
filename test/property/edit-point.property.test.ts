import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { defaultEconomyPolicy } from '../../src/rewrite/economy/types.ts'
import type { ConversationMemory } from '../../src/rewrite/pipeline.ts'
import type { ChatView } from '../../src/rewrite/types.ts'
import { runRewritten, viewOf, viewRound, type ViewStep } from '../helpers/chat-view.ts'

const reachBack = { read: 0.1, write: 1.25, requestsAhead: 200 }

// Small and large results, and long answers with no tool result in them: the shapes where reaching back matters.
const step: fc.Arbitrary<ViewStep> = fc.oneof(
  fc.integer({ min: 20, max: 90 }).map((tokens) => viewRound(tokens, `small-${tokens}`)),
  fc.integer({ min: 300, max: 2_500 }).map((tokens) => viewRound(tokens, `large-${tokens}`)),
  fc.integer({ min: 500, max: 6_000 }).map((tokens): ViewStep => ({ kind: 'turn', tokens })),
)
// Ids must be unique: number them by position.
const steps = fc
  .array(step, { minLength: 4, maxLength: 40 })
  .map((list) =>
    list.map((entry, index): ViewStep => (entry.kind === 'round' ? { ...entry, ids: [`r${index}`] } : entry)),
  )

const messageOf = (view: ChatView, id: string): number =>
  view.messages.findIndex((message) => message.toolResults.some((result) => result.id === id))

describe('where a batch starts and where the marker before it was kept', () => {
  it('a new batch, the economy’s or the budget’s, never starts before the marker the previous request kept', () => {
    let economyBatches = 0
    let budgetBatches = 0
    fc.assert(
      // A tight budget makes the planner's batches, a roomy one the economy's.
      fc.property(steps, fc.boolean(), fc.constantFrom(12_000, 40_000), (list, economyOn, budget) => {
        let memory: ConversationMemory | undefined
        let marker: number | undefined
        for (let count = 1; count <= list.length; count++) {
          const view = viewOf(list.slice(0, count))
          const outcome = runRewritten(view, memory, {
            note: undefined,
            limits: { window: 50_000, budget },
            reachBack,
            ...(economyOn
              ? {
                  economy: {
                    prices: {
                      match: '*',
                      input: null,
                      output: null,
                      cacheWrite5m: 1.25,
                      cacheWrite1h: 2,
                      cacheRead: 0.1,
                    },
                    policy: { ...defaultEconomyPolicy, startTokens: 4_000, shortSessionRequests: 3 },
                  },
                }
              : {}),
          })
          const before = memory?.decisions.results ?? {}
          const fresh = Object.keys(outcome.next.decisions.results).filter((id) => !Object.hasOwn(before, id))
          // Over the hard limit with nothing else left, the planner may still reach back (rather than drop turns).
          const stressed = outcome.report.droppedMessages > 0 || outcome.report.estimatedAfter > 0.6 * budget
          if (outcome.batch?.reason === 'over_budget') budgetBatches++
          else if (outcome.batch) economyBatches++
          if (fresh.length > 0 && marker !== undefined && !stressed) {
            const start = Math.min(...fresh.map((id) => messageOf(view, id)))
            expect(start).toBeGreaterThanOrEqual(marker)
          }
          marker = outcome.nextEditResult === undefined ? undefined : messageOf(view, outcome.nextEditResult)
          // The session store counts requests; the pure pipeline only reads the count.
          memory = {
            ...outcome.next,
            requests: count,
            ...(outcome.previousTail === undefined ? {} : { previousTail: outcome.previousTail }),
          }
        }
      }),
      { numRuns: 300 },
    )
    expect(economyBatches).toBeGreaterThan(0)
    expect(budgetBatches).toBeGreaterThan(0)
  })
})
