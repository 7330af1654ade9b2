import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { Calibration } from '../../src/calibration/calibration.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { createLogger } from '../../src/log/logger.ts'
import type { PrepareResult } from '../../src/request/prepared.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { nothingToPlan } from '../../src/rewrite/nothing-to-plan.ts'
import { planEveryStep, planRewrite, type PlanInput } from '../../src/rewrite/plan.ts'
import type { FrozenDecisions } from '../../src/rewrite/types.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { ConversationState } from '../../src/session/session-store.ts'
import { testDropNoteFraming, testPolicy, viewOf, viewRound, viewTokens, viewTurn } from '../helpers/chat-view.ts'
import { requestsIn, stepsArbitrary, wireFixtures } from '../helpers/wire-formats.ts'

// The shortcut can be switched off here, so the hook's two ways are compared in one process.
const shortcut = vi.hoisted(() => ({ on: true, taken: 0 }))
vi.mock('../../src/rewrite/nothing-to-plan.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/rewrite/nothing-to-plan.ts')>()
  return {
    nothingToPlan: (input: PlanInput) => {
      if (!shortcut.on) return undefined
      const outcome = real.nothingToPlan(input)
      if (outcome) shortcut.taken++
      return outcome
    },
  }
})

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
    expect(taken).toBeGreaterThan(30)
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

/** The hook on a fixed clock with a store that records every state it is given. */
function recordingHook(format: (typeof wireFixtures)[number]['format'], window: number) {
  const config = loadConfig({
    overrides: {
      models: [{ match: '*', window, budget: 1, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      economy: { startTokens: 1_500, shortSessionRequests: 2 },
    } as DeepPartial<Config>,
  })
  const saved: [string, ConversationState][] = []
  const store = new MemorySessionStore({ ...config.sessions, now: () => 1_000_000 })
  const set = store.set.bind(store)
  store.set = (key, state, before) => {
    saved.push([key, structuredClone(state)])
    return set(key, state, before)
  }
  const hook = createRewriteHook({
    config,
    store,
    calibration: new Calibration(),
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
    now: () => 1_000_000,
  })(format)
  if (!hook) throw new Error(`no hook for ${format}`)
  return { hook, saved }
}

/** Everything a request's preparation hands on: the bytes, ctxgate's headers, the log and accounting, or the refusal. */
function handedOn(result: PrepareResult): unknown {
  if (result.kind === 'reject') return { error: result.error.message, log: result.log, accounting: result.accounting }
  const { body, headers, log, accounting, hideUsageChunk } = result.prepared
  return { body: body.toString('latin1'), headers, log, accounting, hideUsageChunk }
}

describe.each(wireFixtures)('the hook with and without the shortcut, $format', (fixture) => {
  it('sends the same bytes and logs, saves the same state, on small conversations around their budget', async () => {
    shortcut.taken = 0
    await fc.assert(
      fc.asyncProperty(stepsArbitrary(0, 5), fc.integer({ min: 200, max: 9_000 }), async (steps, window) => {
        const both = [true, false].map((on) => ({ on, ...recordingHook(fixture.format, window) }))
        for (const request of requestsIn(fixture, fixture.conversation(steps))) {
          const body = Buffer.from(JSON.stringify(fixture.body(request)))
          const results: unknown[] = []
          for (const { on, hook } of both) {
            shortcut.on = on
            results.push(handedOn(await hook(Buffer.from(body), { 'x-ctxgate-session': 'compare' })))
          }
          shortcut.on = true
          expect(results[0]).toEqual(results[1])
        }
        expect(both[0]?.saved).toEqual(both[1]?.saved)
      }),
      { numRuns: 40 },
    )
    expect(shortcut.taken).toBeGreaterThan(20)
  })
})
