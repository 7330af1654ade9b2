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

describe('records made after dispatch', () => {
  it('are the eager path’s records, request by request, on generated conversations', async () => {
    let deferred = 0
    let eager = 0
    await fc.assert(
      fc.asyncProperty(conversationArbitrary, async (conversation) => {
        const overrides = {
          models: [
            {
              match: '*',
              window: conversation.window,
              budget: 0.9,
              minCacheableTokens: 1024,
              thinkingBoundToPrefix: true,
            },
          ],
          rewrite: { economy: conversation.economy, systemNotePlacement: conversation.notePlacement },
          economy: { startTokens: conversation.startTokens, shortSessionRequests: 2 },
        }
        const eagerClock = { now: 1_000_000 }
        const deferredClock = { now: 1_000_000 }
        const before = hookFor(overrides, eagerClock)
        const after = hookFor(overrides, deferredClock)
        const requests = requestsOf(buildMessages(conversation.steps))
        for (const [index, messages] of requests.entries()) {
          const last = index === requests.length - 1
          const extra: Json = {
            ...(conversation.userId ? { metadata: { user_id: conversation.userId } } : {}),
            ...(last && conversation.compaction
              ? { system: 'You are a helpful AI assistant tasked with summarizing conversations.' }
              : {}),
          }
          const body = Buffer.from(JSON.stringify(anthropicBody(messages, extra)))
          const headers = { 'user-agent': 'claude-cli/2.0.0' }
          const expected = await before.hook(Buffer.from(body), headers)
          const result = await after.hook(Buffer.from(body), headers, { recordsAfterDispatch: true })
          const early = result.kind === 'forward' ? result.prepared : undefined
          if (early?.afterDispatch) {
            deferred++
            // What goes upstream is decided before the records: the same bytes and headers.
            expect(early.body.equals(body)).toBe(true)
            expect(early.log).toBeUndefined()
          } else eager++
          const whole = early?.afterDispatch ? await early.afterDispatch() : early
          expect(seen(result, whole)).toEqual(
            seen(expected, expected.kind === 'forward' ? expected.prepared : undefined),
          )
          expect(after.store.writes).toEqual(before.store.writes)
          eagerClock.now += conversation.gapMs
          deferredClock.now += conversation.gapMs
        }
      }),
      { numRuns: 80 },
    )
    // Neither side is vacuous: many requests take the deferred path, and many cannot.
    expect(deferred).toBeGreaterThan(40)
    expect(eager).toBeGreaterThan(40)
  }, 60_000)
})
