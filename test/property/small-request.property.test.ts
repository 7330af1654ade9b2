import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { nothingToPlan } from '../../src/rewrite/nothing-to-plan.ts'
import { planEveryStep, planRewrite, type PlanInput } from '../../src/rewrite/plan.ts'
import type { ChatView, FrozenDecisions } from '../../src/rewrite/types.ts'
import type { ApplyOptions } from '../../src/providers/adapter-contract.ts'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { tooShortToMark } from '../../src/providers/anthropic/too-short-to-mark.ts'
import { anthropicBody, buildMessages, type Json } from '../helpers/conversations.ts'
import { testDropNoteFraming, testPolicy, viewOf, viewRound, viewTokens, viewTurn } from '../helpers/chat-view.ts'
import { stepsArbitrary } from '../helpers/wire-formats.ts'

const estimator = new TokenEstimator()

const none = (decisions: FrozenDecisions) => ({ arbitrary: fc.constant(decisions), weight: 4 })
const some = (decisions: FrozenDecisions) => ({ arbitrary: fc.constant(decisions), weight: 1 })
const decisionsArbitrary: fc.Arbitrary<FrozenDecisions> = fc.oneof(
  none({ results: {} }),
  some({ results: {}, restored: {} }),
  some({ results: { a1: { hash: 'a1:400', action: 'clear', at: 1 } } }),
  some({ results: {}, restored: { a1: { hash: 'a1:400', at: 1 } } }),
  some({ results: {}, drop: { keepFrom: 3, scope: 'turns', hash: 'calls-1' } }),
)

const stepArbitrary = fc.oneof(
  fc.constant(viewTurn),
  fc
    .record({ tokens: fc.integer({ min: 1, max: 2_000 }), id: fc.string({ minLength: 1, maxLength: 3 }) })
    .map(({ tokens, id }) => viewRound(tokens, `a${id}`)),
)

/** A plan input around its own estimate: the budget from just under to just over what the request holds. */
const planInputArbitrary = fc
  .record({
    steps: fc.array(stepArbitrary, { maxLength: 8 }),
    headTokens: fc.integer({ min: 0, max: 3_000 }),
    factor: fc.constantFrom(0.9, 1, 1.07, 1.3),
    slack: fc.integer({ min: -30, max: 30 }),
    decisions: decisionsArbitrary,
    strategy: fc.constantFrom('clear-only' as const, 'batched-fold' as const, 'eager-fold' as const),
    batch: fc.constantFrom(undefined, [] as string[], ['a1']),
  })
  .map(({ steps, headTokens, factor, slack, decisions, strategy, batch }): PlanInput => {
    const view = viewOf(steps, { headTokens })
    return {
      view,
      decisions,
      budget: viewTokens(view) * factor + slack,
      policy: { ...testPolicy, strategy },
      factor,
      estimator,
      dropNoteFraming: testDropNoteFraming,
      request: 2,
      ...(batch ? { batch } : {}),
    }
  })

describe('a request with nothing to plan', () => {
  it('gets, without the planner, exactly the outcome the planner gives it', () => {
    let taken = 0
    fc.assert(
      fc.property(planInputArbitrary, (input) => {
        const quick = nothingToPlan(input)
        if (quick === undefined) return
        taken++
        expect(quick).toEqual(planEveryStep(input))
        expect(planRewrite(input)).toEqual(quick)
      }),
      { numRuns: 400 },
    )
    // Not a property of the empty set: the shortcut is taken on a good share of the inputs.
    expect(taken).toBeGreaterThan(15)
  })

  it('is not taken when the request is one token over its budget', () => {
    const view = viewOf([viewTurn], { headTokens: 50 })
    const input: PlanInput = {
      view,
      decisions: { results: {} },
      budget: viewTokens(view) - 1,
      policy: testPolicy,
      factor: 1,
      estimator,
      dropNoteFraming: testDropNoteFraming,
    }
    expect(nothingToPlan(input)).toBeUndefined()
    expect(nothingToPlan({ ...input, budget: viewTokens(view) })).toBeDefined()
  })
})

/** A client's own markers, somewhere in its head or its newest message. */
const clientMarkers = fc.constantFrom('none', 'system', 'tools', 'newest', 'top-level', 'every slot')

function marked(body: Json, where: string): Json {
  const marker = { type: 'ephemeral' }
  if (where === 'system')
    return { ...body, system: [{ type: 'text', text: String(body['system']), cache_control: marker }] }
  if (where === 'tools')
    return { ...body, tools: (body['tools'] as Json[]).map((tool) => ({ ...tool, cache_control: marker })) }
  if (where === 'top-level') return { ...body, cache_control: marker }
  if (where === 'every slot')
    return marked(marked(marked({ ...body, cache_control: marker }, 'system'), 'tools'), 'newest')
  if (where !== 'newest') return body
  const messages = body['messages'] as Json[]
  const newest = messages.at(-1) as Json
  const text = typeof newest['content'] === 'string' ? newest['content'] : 'next'
  return {
    ...body,
    messages: [...messages.slice(0, -1), { ...newest, content: [{ type: 'text', text, cache_control: marker }] }],
  }
}

describe('breakpoints on a request too short to cache', () => {
  it('are what placing them would give: none, and the body unchanged', () => {
    let short = 0
    fc.assert(
      fc.property(
        stepsArbitrary(0, 3),
        clientMarkers,
        // Mostly within a note's size of the request's own length, where a wrong sum would show.
        fc.integer({ min: -40, max: 40 }),
        fc.integer({ min: -1, max: 8 }),
        fc.constantFrom(undefined, 'toolu_0_0'),
        fc.constantFrom(undefined, '1h' as const),
        fc.constantFrom(undefined, 'A note from the proxy.'),
        (steps, where, offset, tail, nextEditResult, stableTtl, systemNote) => {
          const body = marked(anthropicBody(buildMessages(steps)), where)
          const view = anthropicMessagesAdapter.view(body, estimator)
          const minCacheableTokens = Math.max(0, viewTokens(view) + offset)
          const options: ApplyOptions = {
            edits: [],
            sessionId: 's',
            minCacheableTokens,
            thinkingBound: true,
            firstEditedMessage: -1,
            estimator,
            ...(tail >= 0 ? { previousTail: tail } : {}),
            ...(nextEditResult ? { nextEditResult } : {}),
            ...(stableTtl ? { stableTtl } : {}),
            ...(systemNote ? { systemNote } : {}),
          }
          if (tooShortToMark(view, options)) short++
          // Said without writing: the adapter's `asSent` is what `apply` returns, whenever it answers.
          const { stableTtl: _ttl, ...withoutTtl } = options
          const asSent = anthropicMessagesAdapter.asSent?.(body, view, withoutTtl)
          if (asSent !== undefined) {
            const applied = anthropicMessagesAdapter.apply(body, view, options)
            expect({ ...asSent, body: JSON.stringify(asSent.body) }).toEqual({
              ...applied,
              body: JSON.stringify(applied.body),
            })
          }
          // The view is read only to decide the shortcut: one of endless sizes takes the full placement.
          const apply = (decidedBy: ChatView) => {
            const applied = anthropicMessagesAdapter.apply(body, decidedBy, options)
            return { ...applied, body: JSON.stringify(applied.body) }
          }
          const endless = {
            ...view,
            headTokens: Number.POSITIVE_INFINITY,
            messages: view.messages.map((message) => ({ ...message, tokens: Number.POSITIVE_INFINITY })),
          }
          expect(apply(view)).toEqual(apply(endless))
        },
      ),
      { numRuns: 300 },
    )
    expect(short).toBeGreaterThan(10)
  })
})
