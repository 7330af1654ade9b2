import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { systemNote } from '../../src/rewrite/notes.ts'
import { defaultEconomyPolicy } from '../../src/rewrite/economy/types.ts'
import type { ConversationMemory } from '../../src/rewrite/pipeline.ts'
import type { ChatView } from '../../src/rewrite/types.ts'
import { runRewritten, testPolicy, viewOf, viewRound, type ViewStep } from '../helpers/chat-view.ts'

const reachBack = { read: 0.1, write: 1.25, requestsAhead: 200 }

// Small and large results, and long answers with no tool result in them: the shapes where reaching back matters.
const step: fc.Arbitrary<ViewStep> = fc.oneof(
  fc.integer({ min: 20, max: 90 }).map((tokens) => viewRound(tokens, 'small')),
  fc.integer({ min: 300, max: 2_500 }).map((tokens) => viewRound(tokens, 'large')),
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

const economy = {
  prices: { match: '*', input: null, output: null, cacheWrite5m: 1.25, cacheWrite1h: 2, cacheRead: 0.1 },
  // Priced at the median forecast: these sessions are short, and the property needs batches of the economy's own.
  policy: { ...defaultEconomyPolicy, startTokens: 4_000, shortSessionRequests: 3, forecastQuantile: 0.5 },
}

describe('where a batch starts and where the marker before it was kept', () => {
  it('no new edit, the economy’s, the budget’s or a fold, starts before the marker the previous request kept', () => {
    let economyBatches = 0
    let budgetBatches = 0
    fc.assert(
      fc.property(
        steps,
        fc.boolean(),
        // A tight budget makes the planner's batches, a roomy one the economy's.
        fc.constantFrom(12_000, 40_000),
        fc.constantFrom('clear-only' as const, 'batched-fold' as const, 'eager-fold' as const),
        fc.boolean(),
        (list, economyOn, budget, strategy, withNote) => {
          let memory: ConversationMemory | undefined
          for (let count = 1; count <= list.length; count++) {
            const view = viewOf(list.slice(0, count))
            const outcome = runRewritten(view, memory, {
              note: withNote ? { text: systemNote, tokens: 90 } : undefined,
              limits: { window: 50_000, budget },
              policy: { ...testPolicy, strategy },
              reachBack,
              ...(economyOn ? { economy } : {}),
            })
            const report = outcome.report
            if (outcome.batch?.reason === 'over_budget') budgetBatches++
            else if (outcome.batch) economyBatches++
            // The promise is off when the note joins the head (all is written again), and over the
            // hard limit when only turns or results behind the marker could make the request fit.
            const noteJoined = outcome.noteOn && memory?.noteOn !== true
            const forced = report.clearedBehindMarker === true || (report.newBatch && report.droppedMessages > 0)
            const kept = memory?.nextEditResult === undefined ? -1 : messageOf(view, memory.nextEditResult)
            if (report.firstNewEdit >= 0 && kept >= 0 && !noteJoined && !forced)
              expect(report.firstNewEdit).toBeGreaterThanOrEqual(kept)
            // The session store counts requests; the pure pipeline only reads the count.
            memory = {
              ...outcome.next,
              requests: count,
              ...(outcome.previousTail === undefined ? {} : { previousTail: outcome.previousTail }),
            }
          }
        },
      ),
      { numRuns: 400 },
    )
    expect(economyBatches).toBeGreaterThan(0)
    expect(budgetBatches).toBeGreaterThan(0)
  })
})
