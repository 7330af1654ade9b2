import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countAnthropicRequest } from '../../src/mock/anthropic-messages.ts'
import { anthropicBody, buildMessages, requestsOf, stepArbitrary, type Json } from '../helpers/conversations.ts'
import { createRewriter, reportOf, sentBody } from '../helpers/rewrite.ts'

const conversation = fc.array(stepArbitrary, { minLength: 1, maxLength: 24 }).map(buildMessages)
const windowSize = fc.integer({ min: 3_000, max: 60_000 })
const strategy = fc.constantFrom('clear-only' as const, 'batched-fold' as const, 'eager-fold' as const)

/** The fake upstream's own validation: tool pairing, at most 4 breakpoints, TTL order, non-empty text. */
function assertAcceptedByTheApi(body: Json): void {
  countAnthropicRequest(
    body,
    { windowFor: () => Number.MAX_SAFE_INTEGER, minCacheableFor: () => 0, replyText: () => '' },
    undefined,
  )
}

const withoutMarkers = (value: unknown): string =>
  JSON.stringify(value).replace(/,"cache_control":\{"type":"ephemeral"\}/g, '')
const blocks = (body: Json): Json[] =>
  (body['messages'] as Json[]).flatMap((message) =>
    Array.isArray(message['content']) ? (message['content'] as Json[]) : [],
  )

describe('rewrite invariants over generated conversations', () => {
  it('keeps every call with its result, unknown fields and thinking intact, ≤ 4 breakpoints, and fits the budget or says so', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, windowSize, strategy, async (messages, window, chosen) => {
        const rewrite = createRewriter('anthropic-messages', window, { rewrite: { strategy: chosen } })
        const original = anthropicBody(messages)
        const result = await rewrite(original)
        const report = reportOf(result)
        if (result.kind === 'reject') {
          expect(result.error.code).toBe('CTXGATE_CONTEXT_TOO_LONG')
          return
        }
        const sent = sentBody(result)
        assertAcceptedByTheApi(sent)
        expect(Number(report['estimatedAfter'])).toBeLessThanOrEqual(Number(report['budget']))
        expect(sent['x_top_level_field']).toBe('kept')
        expect((sent['messages'] as Json[])[0]?.['x_client_field']).toEqual({ keep: true })
        const thinkingIn = new Set(
          blocks(original)
            .filter((block) => block['type'] === 'thinking')
            .map((block) => JSON.stringify(block)),
        )
        for (const block of blocks(sent).filter((entry) => entry['type'] === 'thinking'))
          expect(thinkingIn.has(JSON.stringify(block))).toBe(true)
        // Unknown block fields survive on every result still present.
        const extras = new Map(
          blocks(original)
            .filter((block) => 'x_block_field' in block)
            .map((block) => [block['tool_use_id'], block['x_block_field']]),
        )
        for (const block of blocks(sent))
          if (block['type'] === 'tool_result' && extras.has(block['tool_use_id']))
            expect(block['x_block_field']).toBe(extras.get(block['tool_use_id']))
      }),
      { numRuns: 60 },
    )
  })

  it('is idempotent: rewriting a rewritten request changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, windowSize, async (messages, window) => {
        const once = await createRewriter('anthropic-messages', window)(anthropicBody(messages))
        if (once.kind === 'reject') return
        const first = sentBody(once)
        const twice = await createRewriter('anthropic-messages', window)(first)
        expect(JSON.stringify(sentBody(twice))).toBe(JSON.stringify(first))
      }),
      { numRuns: 40 },
    )
  })

  it('over a growing conversation, each rewritten request extends the previous one except at counted batch points', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArbitrary, { minLength: 4, maxLength: 30 }).map(buildMessages),
        windowSize,
        strategy,
        async (messages, window, chosen) => {
          const rewrite = createRewriter('anthropic-messages', window, { rewrite: { strategy: chosen } })
          let previous: Json | undefined
          let previousReport: Record<string, unknown> | undefined
          for (const request of requestsOf(messages)) {
            const result = await rewrite(anthropicBody(request))
            if (result.kind === 'reject') return
            const sent = sentBody(result)
            const report = reportOf(result)
            expect(report['clientEdited']).toBe(false)
            if (report['newBatch'] === true) {
              // Hysteresis: after a batch that reached its low-water mark, the next batch waits until the
              // conversation has grown back past the budget; frozen decisions keep it from re-deciding sooner.
              const budget = Number(report['budget'])
              // (Eager folding folds each output as it ages, by design, so only the budget-driven strategies are held to this.)
              if (
                chosen !== 'eager-fold' &&
                previousReport &&
                Number(previousReport['estimatedAfter']) <= budget * 0.6
              ) {
                const grown = Number(report['estimatedBefore']) - Number(previousReport['estimatedBefore'])
                expect(grown).toBeGreaterThan(budget - Number(previousReport['estimatedAfter']) - 10)
              }
            } else if (previous) {
              const before = withoutMarkers(previous['messages']).slice(0, -1)
              expect(withoutMarkers(sent['messages']).startsWith(before)).toBe(true)
              expect(withoutMarkers(sent['system'])).toBe(withoutMarkers(previous['system']))
              expect(withoutMarkers(sent['tools'])).toBe(withoutMarkers(previous['tools']))
            }
            previous = sent
            previousReport = report
          }
        },
      ),
      { numRuns: 30 },
    )
  })

  it('never folds the newest 3 rounds, and never clears the newest result', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, windowSize, strategy, async (messages, window, chosen) => {
        const result = await createRewriter('anthropic-messages', window, { rewrite: { strategy: chosen } })(
          anthropicBody(messages),
        )
        if (result.kind === 'reject') return
        const sent = sentBody(result)
        const rounds = (sent['messages'] as Json[]).filter(
          (message) =>
            message['role'] === 'assistant' &&
            Array.isArray(message['content']) &&
            (message['content'] as Json[]).some((block) => block['type'] === 'tool_use'),
        )
        const recentIds = new Set(
          rounds
            .slice(-3)
            .flatMap((message) =>
              (message['content'] as Json[])
                .filter((block) => block['type'] === 'tool_use')
                .map((block) => block['id']),
            ),
        )
        const results = blocks(sent).filter((block) => block['type'] === 'tool_result')
        for (const block of results)
          if (recentIds.has(block['tool_use_id'])) expect(String(block['content'])).not.toMatch(/^\[ctxgate folded/)
        const newest = results.at(-1)
        if (newest) {
          const original = blocks(anthropicBody(messages)).find(
            (block) => block['type'] === 'tool_result' && block['tool_use_id'] === newest['tool_use_id'],
          )
          expect(newest['content']).toEqual(original?.['content'])
        }
      }),
      { numRuns: 60 },
    )
  })
})
