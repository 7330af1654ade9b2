import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { Calibration } from '../../src/calibration/calibration.ts'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { createLogger } from '../../src/log/logger.ts'
import type { PrepareBody, PrepareResult, Prepared } from '../../src/request/prepared.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { ConversationState, SessionStore } from '../../src/session/session-store.ts'
import { anthropicBody, buildMessages, requestsOf, type Json } from '../helpers/conversations.ts'
import { stepsArbitrary } from '../helpers/wire-formats.ts'

/** Calls of the pipeline's decision: a request the hook sent before planning makes none before its records. */
const decisions = vi.hoisted(() => ({ calls: 0 }))
vi.mock('../../src/rewrite/pipeline.ts', async (importOriginal) => {
  const pipeline = await importOriginal<typeof import('../../src/rewrite/pipeline.ts')>()
  return {
    ...pipeline,
    decideRewrite: (...args: Parameters<typeof pipeline.decideRewrite>) => {
      decisions.calls++
      return pipeline.decideRewrite(...args)
    },
  }
})

/** A memory store that keeps every write, in order, to compare two hooks' saved states. */
class WritesKept implements SessionStore {
  readonly kind = 'memory'
  readonly writes: { key: string; state: ConversationState; before: ConversationState | undefined }[] = []
  readonly #store: MemorySessionStore

  constructor(store: MemorySessionStore) {
    this.#store = store
  }

  get(key: string): Promise<ConversationState | undefined> {
    return this.#store.get(key)
  }

  async set(key: string, state: ConversationState, before?: ConversationState): Promise<void> {
    this.writes.push({ key, state, before })
    await this.#store.set(key, state)
  }

  finishedLengths(kind: string): Promise<readonly number[]> {
    return this.#store.finishedLengths(kind)
  }

  size(): number {
    return this.#store.size()
  }

  healthy(): boolean {
    return true
  }
}

interface Hooked {
  readonly hook: PrepareBody
  readonly store: WritesKept
}

function hookFor(overrides: DeepPartial<Config>, clock: { now: number }): Hooked {
  const config = loadConfig({ overrides: overrides as DeepPartial<Config> })
  const store = new WritesKept(new MemorySessionStore({ ...config.sessions, now: () => clock.now }))
  const hook = createRewriteHook({
    config,
    store,
    calibration: new Calibration(),
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
    now: () => clock.now,
  })('anthropic-messages')
  if (!hook) throw new Error('no Anthropic hook')
  return { hook, store }
}

/** What a caller of the hook sees of one request, once its records are made. */
function seen(result: PrepareResult, prepared: Prepared | undefined) {
  if (result.kind !== 'forward' || !prepared) return result
  return {
    kind: result.kind,
    body: prepared.body.toString('utf8'),
    headers: prepared.headers,
    log: prepared.log,
    accounting: prepared.accounting,
    hideUsageChunk: prepared.hideUsageChunk,
    replannable: prepared.followUp?.replannable,
  }
}

/** Conversations from a few short turns to past the model's minimum cacheable length and the budget. */
const conversationArbitrary = fc.record({
  steps: stepsArbitrary(0, 5),
  // Small windows put some requests over budget (edits), large ones leave every request as sent.
  window: fc.constantFrom(6_000, 9_000, 200_000),
  economy: fc.constantFrom('cache-priced' as const, 'budget-only' as const),
  startTokens: fc.constantFrom(1_000, 4_000),
  gapMs: fc.constantFrom(1_000, 30_000, 400_000),
  compaction: fc.boolean(),
  userId: fc.constantFrom(undefined, 'user-a'),
  notePlacement: fc.constantFrom('auto' as const, 'first-request' as const),
})

/** How one request went through the hook that may record after dispatch. */
interface Went {
  /** Its records were made after its bytes were ready (`afterDispatch`). */
  readonly deferred: boolean
  /** It was not planned before that either (send-before-planning.ts). */
  readonly plannedAfter: boolean
}

/**
 * Sends each body through a hook that records before dispatch and one that may record (and plan)
 * after, on clocks that move alike, and checks that they answer, log, count and save the same.
 */
async function compareHooks(
  overrides: DeepPartial<Config>,
  bodies: readonly Buffer[],
  headers: Record<string, string>,
  gapMs: number,
): Promise<Went[]> {
  const eagerClock = { now: 1_000_000 }
  const deferredClock = { now: 1_000_000 }
  const before = hookFor(overrides, eagerClock)
  const after = hookFor(overrides, deferredClock)
  const went: Went[] = []
  for (const body of bodies) {
    const expected = await before.hook(Buffer.from(body), headers)
    const callsBefore = decisions.calls
    const result = await after.hook(Buffer.from(body), headers, { recordsAfterDispatch: true })
    const early = result.kind === 'forward' ? result.prepared : undefined
    if (early?.afterDispatch) {
      // What goes upstream is decided before the records: the same bytes and headers.
      expect(early.body.equals(body)).toBe(true)
      expect(early.log).toBeUndefined()
    }
    went.push({ deferred: early?.afterDispatch !== undefined, plannedAfter: decisions.calls === callsBefore })
    const whole = early?.afterDispatch ? await early.afterDispatch() : early
    // A plan made after sending that would have changed the request fails its records: seen here as a missing log.
    expect(seen(result, whole)).toEqual(seen(expected, expected.kind === 'forward' ? expected.prepared : undefined))
    expect(after.store.writes).toEqual(before.store.writes)
    eagerClock.now += gapMs
    deferredClock.now += gapMs
  }
  return went
}

/** One model entry for every model name, with the window and minimum cacheable length given. */
const everyModel = (window: number, minCacheableTokens: number) => [
  { match: '*', window, budget: 0.9, minCacheableTokens, thinkingBoundToPrefix: true },
]

describe('records made after dispatch', () => {
  it('are the eager path’s records, request by request, on generated conversations', async () => {
    let deferred = 0
    let eager = 0
    await fc.assert(
      fc.asyncProperty(conversationArbitrary, async (conversation) => {
        const overrides = {
          models: everyModel(conversation.window, 1024),
          rewrite: { economy: conversation.economy, systemNotePlacement: conversation.notePlacement },
          economy: { startTokens: conversation.startTokens, shortSessionRequests: 2 },
        }
        const requests = requestsOf(buildMessages(conversation.steps))
        const bodies = requests.map((messages, index) => {
          const last = index === requests.length - 1
          const extra: Json = {
            ...(conversation.userId ? { metadata: { user_id: conversation.userId } } : {}),
            ...(last && conversation.compaction
              ? { system: 'You are a helpful AI assistant tasked with summarizing conversations.' }
              : {}),
          }
          return Buffer.from(JSON.stringify(anthropicBody(messages, extra)))
        })
        const went = await compareHooks(overrides, bodies, { 'user-agent': 'claude-cli/2.0.0' }, conversation.gapMs)
        for (const request of went)
          if (request.deferred) deferred++
          else eager++
      }),
      { numRuns: 80 },
    )
    // Neither side is vacuous: many requests take the deferred path, and many cannot.
    expect(deferred).toBeGreaterThan(40)
    expect(eager).toBeGreaterThan(40)
  }, 60_000)

  it('are the eager path’s records for short requests planned after sending, near every bound the plan has', async () => {
    let plannedAfter = 0
    let plannedBefore = 0
    await fc.assert(
      fc.asyncProperty(shortConversationArbitrary, async (conversation) => {
        const overrides = {
          models: everyModel(conversation.window, conversation.minCacheableTokens),
          rewrite: { systemNote: conversation.systemNote, systemNotePlacement: conversation.notePlacement },
          economy: { startTokens: 1_000, shortSessionRequests: 2 },
        }
        const headers = {
          'user-agent': 'claude-cli/2.0.0',
          ...(conversation.budgetHeader === null ? {} : { 'x-ctxgate-budget': String(conversation.budgetHeader) }),
        }
        const extra = {
          max_tokens: conversation.maxTokens,
          ...(conversation.system === null ? {} : { system: conversation.system }),
        }
        const bodies = requestsOf(shortMessages(conversation.turns)).map((messages) =>
          Buffer.from(JSON.stringify(anthropicBody(messages, extra))),
        )
        for (const request of await compareHooks(overrides, bodies, headers, conversation.gapMs))
          if (request.deferred && request.plannedAfter) plannedAfter++
          else plannedBefore++
      }),
      { numRuns: 300 },
    )
    // Both ways are taken often: short requests that may go first, and those whose plan may change them.
    expect(plannedAfter).toBeGreaterThan(60)
    expect(plannedBefore).toBeGreaterThan(60)
  }, 60_000)
})

/** Short conversations around the minimum cacheable length, the budget (tiny windows, the budget header) and the note's switches. */
const shortConversationArbitrary = fc.record({
  turns: fc.array(
    fc.record({ chars: fc.integer({ min: 1, max: 4_000 }), tool: fc.constantFrom(false, false, false, true) }),
    { minLength: 1, maxLength: 4 },
  ),
  window: fc.constantFrom(1_200, 5_000, 200_000, 200_000, 200_000),
  maxTokens: fc.constantFrom(16, 600, 2_000),
  // Around where the check's room for the note stops fitting, and far below.
  budgetHeader: fc.option(fc.oneof(fc.integer({ min: 50, max: 2_000 }), fc.integer({ min: 4_000, max: 9_000 })), {
    freq: 2,
  }),
  minCacheableTokens: fc.constantFrom(256, 1_024, 4_096, 4_096),
  systemNote: fc.boolean(),
  notePlacement: fc.constantFrom('auto' as const, 'head' as const, 'first-request' as const),
  system: fc.option(fc.constantFrom('You are a coding agent.', 'x'.repeat(3_000))),
  gapMs: fc.constantFrom(1_000, 400_000),
})

/** User and assistant text of the given sizes, with a tool round where a turn asks for one. */
function shortMessages(turns: readonly { readonly chars: number; readonly tool: boolean }[]): Json[] {
  const messages: Json[] = []
  turns.forEach(({ chars, tool }, index) => {
    if (index > 0 && tool) {
      const id = `toolu_short_${index}`
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'run', input: { index } }] })
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, content: 'ok '.repeat(chars / 3) }],
      })
      return
    }
    if (index > 0) messages.push({ role: 'assistant', content: `Answer ${index}.` })
    messages.push({
      role: 'user',
      content: `Question ${index}: ${'word '.repeat(Math.ceil(chars / 5))}`.slice(0, chars + 14),
    })
  })
  return messages
}
