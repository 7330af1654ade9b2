import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
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
  /** Times the hook asked the calibration for a factor: every plan made before dispatch asks, one left until after it does not. */
  readonly factorCalls: { count: number }
}

function hookFor(overrides: DeepPartial<Config>, clock: { now: number }): Hooked {
  const config = loadConfig({ overrides: overrides as DeepPartial<Config> })
  const store = new WritesKept(new MemorySessionStore({ ...config.sessions, now: () => clock.now }))
  const calibration = new Calibration()
  const factorCalls = { count: 0 }
  const factor = calibration.factor.bind(calibration)
  calibration.factor = (...args) => {
    factorCalls.count++
    return factor(...args)
  }
  const hook = createRewriteHook({
    config,
    store,
    calibration,
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
    now: () => clock.now,
  })('anthropic-messages')
  if (!hook) throw new Error('no Anthropic hook')
  return { hook, store, factorCalls }
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

const clientHeaders = { 'user-agent': 'claude-cli/2.0.0' }

/** How one request went through the hook that may record after dispatch. */
interface Went {
  /** Its records were made after its bytes were ready (`afterDispatch`). */
  readonly deferred: boolean
  /** It was not planned before that either (send-before-planning.ts). */
  readonly plannedAfter: boolean
}

/** One request of a compared sequence: its bytes and headers, and the input tokens its answer reports, if any. */
interface Sent {
  readonly body: Buffer
  readonly headers: Record<string, string>
  /** Reported input tokens as a multiple of the request's bytes ÷ 4: moves the calibration's factor. */
  readonly answeredRatio?: number | undefined
}

/**
 * Sends each request through a hook that records before dispatch and one that may record (and plan)
 * after, on clocks that move alike, and checks that they answer, log, count and save the same; an
 * answer's usage, when given, is recorded by both.
 */
async function compareHooks(overrides: DeepPartial<Config>, requests: readonly Sent[], gapMs: number): Promise<Went[]> {
  const eagerClock = { now: 1_000_000 }
  const deferredClock = { now: 1_000_000 }
  const before = hookFor(overrides, eagerClock)
  const after = hookFor(overrides, deferredClock)
  const went: Went[] = []
  for (const { body, headers, answeredRatio } of requests) {
    const expected = await before.hook(Buffer.from(body), headers)
    const factorCallsBefore = after.factorCalls.count
    const result = await after.hook(Buffer.from(body), headers, { recordsAfterDispatch: true })
    const early = result.kind === 'forward' ? result.prepared : undefined
    if (early?.afterDispatch) {
      // What goes upstream is decided before the records: the same bytes and headers.
      expect(early.body.equals(body)).toBe(true)
      expect(early.log).toBeUndefined()
    }
    const plannedAfter = early?.afterDispatch !== undefined && after.factorCalls.count === factorCallsBefore
    went.push({ deferred: early?.afterDispatch !== undefined, plannedAfter })
    const whole = early?.afterDispatch ? await early.afterDispatch() : early
    const expectedPrepared = expected.kind === 'forward' ? expected.prepared : undefined
    // A plan made after sending that would have changed the request fails its records: seen here as a missing log.
    expect(seen(result, whole)).toEqual(seen(expected, expectedPrepared))
    expect(after.store.writes).toEqual(before.store.writes)
    if (answeredRatio !== undefined) {
      const inputTokens = Math.round((body.length / 4) * answeredRatio)
      const usage = { inputTokens, outputTokens: 10, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0 }
      await Promise.all([expectedPrepared?.followUp?.recordUsage(usage), whole?.followUp?.recordUsage(usage)])
    }
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
          return { body: Buffer.from(JSON.stringify(anthropicBody(messages, extra))), headers: clientHeaders }
        })
        const went = await compareHooks(overrides, bodies, conversation.gapMs)
        for (const request of went)
          if (request.deferred) deferred++
          else eager++
      }),
      // 80 runs deferred 35–69 requests over ten seeds; 160 keep the threshold far from chance.
      { numRuns: 160 },
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
        const extra = {
          max_tokens: conversation.maxTokens,
          ...(conversation.system === null ? {} : { system: conversation.system }),
        }
        const requests = shortRequests(conversation.turns, conversation.rewritesHistory).map((messages, index) => {
          const step = conversation.perRequest[index % conversation.perRequest.length]
          const budget = step?.budgetHeader
          return {
            body: Buffer.from(JSON.stringify(anthropicBody(messages, extra))),
            headers: budget === undefined ? clientHeaders : { ...clientHeaders, 'x-ctxgate-budget': String(budget) },
            answeredRatio: step?.answeredRatio,
          }
        })
        for (const request of await compareHooks(overrides, requests, conversation.gapMs))
          if (request.plannedAfter) plannedAfter++
          else plannedBefore++
      }),
      { numRuns: 400 },
    )
    // Both ways are taken often: short requests that may go first, and those whose plan may change them.
    expect(plannedAfter).toBeGreaterThan(60)
    expect(plannedBefore).toBeGreaterThan(60)
  }, 60_000)
})

describe('a short request with something to decide', () => {
  /** Text turns of about 200 words each: four are about 1,600 tokens, under every minimum cacheable length here. */
  const textTurns = (count: number): Json[] =>
    Array.from({ length: count }, (_, index) => [
      ...(index > 0 ? [{ role: 'assistant', content: `Answer ${index}.` }] : []),
      { role: 'user', content: `Question ${index}: ${'word '.repeat(200)}` },
    ]).flat()
  const overrides = { models: everyModel(200_000, 4_096), economy: { startTokens: 1_000, shortSessionRequests: 2 } }
  const request = (turns: number, headers: Record<string, string> = {}, answeredRatio?: number): Sent => ({
    body: Buffer.from(JSON.stringify(anthropicBody(textTurns(turns), { max_tokens: 16 }))),
    headers: { ...clientHeaders, ...headers },
    answeredRatio,
  })

  it('is planned before it is sent when its conversation holds a frozen cut', async () => {
    // The first request's own budget (1,000 tokens) cuts its older turns; the next one, short and under
    // the model's budget, must still have them cut.
    const sequence = [request(4, { 'x-ctxgate-budget': '1000' }), request(5)]
    for (const systemNote of [true, false]) {
      // With the note on it joins at the cut, and the conversation's memory says so too.
      const went = await compareHooks({ ...overrides, rewrite: { systemNote } }, sequence, 1_000)
      expect(went.map((request) => request.plannedAfter)).toEqual([false, false])
    }
  })

  it('is planned before it is sent when the conversation’s own factor could put it over budget', async () => {
    // Answered at twice the estimate, the conversation is sized at about 2×: a short second request
    // under a budget of 4,000 tokens fits at the model-wide factor but not at its own.
    const went = await compareHooks(overrides, [request(2, {}, 2), request(5, { 'x-ctxgate-budget': '4000' })], 1_000)
    expect(went.map((request) => request.plannedAfter)).toEqual([true, false])
  })

  it('is sent before planning otherwise: the same requests with no budget header', async () => {
    const went = await compareHooks(overrides, [request(2, {}, 2), request(5)], 1_000)
    expect(went.map((request) => request.plannedAfter)).toEqual([true, true])
  })
})

/** Short conversations around the minimum cacheable length, the budget (tiny windows, the budget header) and the note's switches. */
const shortConversationArbitrary = fc.record({
  turns: fc.array(fc.record({ chars: fc.integer({ min: 1, max: 4_000 }), tool: fc.constantFrom(false, false, true) }), {
    minLength: 1,
    maxLength: 6,
  }),
  rewritesHistory: fc.boolean(),
  window: fc.constantFrom(1_200, 5_000, 200_000, 200_000, 200_000),
  maxTokens: fc.constantFrom(16, 600, 2_000),
  // Each request's own budget header (around where the check's room for the note stops fitting, far
  // below, or none: a request under a tiny budget leaves frozen cuts the next, short one must not skip)
  // and its answer's count (the calibration's factor moves with it).
  perRequest: fc.array(
    fc.record({
      budgetHeader: fc.option(fc.oneof(fc.integer({ min: 300, max: 2_500 }), fc.integer({ min: 4_000, max: 9_000 })), {
        freq: 3,
        nil: undefined,
      }),
      answeredRatio: fc.option(fc.double({ min: 0.5, max: 2, noNaN: true }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  minCacheableTokens: fc.constantFrom(256, 1_024, 4_096, 4_096),
  systemNote: fc.boolean(),
  notePlacement: fc.constantFrom('auto' as const, 'head' as const, 'first-request' as const),
  system: fc.option(fc.constantFrom('You are a coding agent.', 'x'.repeat(3_000))),
  gapMs: fc.constantFrom(1_000, 400_000),
})

/** The requests of a short conversation; with `rewritesHistory` the client drops its older tool rounds from what it re-sends. */
function shortRequests(turns: readonly { readonly chars: number; readonly tool: boolean }[], rewritesHistory: boolean) {
  const requests = requestsOf(shortMessages(turns))
  if (!rewritesHistory) return requests
  return requests.map((messages) =>
    messages.filter((message, index) => index >= messages.length - 2 || !isToolRoundMessage(message)),
  )
}

function isToolRoundMessage(message: Json): boolean {
  const content = message['content']
  return (
    Array.isArray(content) &&
    content.some((block: Json) => block['type'] === 'tool_use' || block['type'] === 'tool_result')
  )
}

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
