import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Json } from '../helpers/conversations.ts'
import { createRewriter, reportOf, sentBody } from '../helpers/rewrite.ts'
import { requestsIn, stepsArbitrary, wireFixtures, withoutMarkers, type WireFixture } from '../helpers/wire-formats.ts'

const windowSize = fc.integer({ min: 3_000, max: 60_000 })
const strategy = fc.constantFrom('clear-only' as const, 'batched-fold' as const, 'eager-fold' as const)

/** A seed that once found a rewritten request refused when sent through again (the note's cost undercounted). */
const idempotenceRegression = {
  seed: -1690679204,
  path: '0:4:3:3:3:3:3:3:3:7:7:7:7:11:11:11:11:11:15:15:15:15:15:15:15:15:17:7:8:7:9:11:9',
  endOnFailure: true,
}

describe.each(wireFixtures)('rewrite invariants over generated $format conversations', (fixture: WireFixture) => {
  const conversation = stepsArbitrary(1, 24).map((steps) => fixture.conversation(steps))

  it('keeps every call with its result, unknown fields and thinking intact, and fits the budget or says so', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, windowSize, strategy, async (list, window, chosen) => {
        const rewrite = createRewriter(fixture.format, window, { rewrite: { strategy: chosen } })
        const original = fixture.body(list)
        const result = await rewrite(original)
        if (result.kind === 'reject') {
          expect(result.error.code).toBe('CTXGATE_CONTEXT_TOO_LONG')
          return
        }
        const sent = sentBody(result)
        const report = reportOf(result)
        fixture.assertAccepted(sent)
        expect(Number(report['estimatedAfter'])).toBeLessThanOrEqual(Number(report['budget']))
        expect(sent['x_top_level_field']).toBe('kept')
        expect(fixture.firstMessage(sent)?.['x_client_field']).toEqual({ keep: true })
        const thinkingIn = new Set(fixture.thinking(original))
        for (const entry of fixture.thinking(sent)) expect(thinkingIn.has(entry)).toBe(true)
        const extras = new Map(fixture.results(original).map((entry) => [entry.id, entry.extra]))
        for (const entry of fixture.results(sent)) expect(entry.extra).toBe(extras.get(entry.id))
      }),
      { numRuns: 40 },
    )
  })

  // A second pass without the conversation's memory changes no content and keeps every marker. It may fill a free
  // cache slot: where a batch began (the next-edit marker on its request) is memory, like the previous request's tail.
  const idempotent = fc.asyncProperty(conversation, windowSize, async (list, window) => {
    const once = await createRewriter(fixture.format, window)(fixture.body(list))
    if (once.kind === 'reject') return
    const first = sentBody(once)
    const second = sentBody(await createRewriter(fixture.format, window)(first))
    expect(withoutMarkers(second)).toBe(withoutMarkers(first))
    const kept = markerPaths(second)
    expect(markerPaths(first).every((path) => kept.includes(path))).toBe(true)
    expect(kept.length).toBeLessThanOrEqual(4)
  })

  it('is idempotent: rewriting a rewritten request changes nothing', async () => {
    await fc.assert(idempotent, { numRuns: 30 })
  })

  it('is idempotent on the seed that once found a rewritten request refused when sent again', async () => {
    await fc.assert(idempotent, idempotenceRegression)
  })

  it('over a growing conversation, each rewritten request extends the previous one except at counted batch points', async () => {
    await fc.assert(
      fc.asyncProperty(
        stepsArbitrary(4, 30).map((steps) => fixture.conversation(steps)),
        windowSize,
        strategy,
        async (list, window, chosen) => {
          const rewrite = createRewriter(fixture.format, window, { rewrite: { strategy: chosen } })
          let previous: { sent: Json; report: Record<string, unknown> } | undefined
          for (const request of requestsIn(fixture, list)) {
            const result = await rewrite(fixture.body(request))
            if (result.kind === 'reject') return
            const current = { sent: sentBody(result), report: reportOf(result) }
            expect(current.report['clientEdited']).toBe(false)
            if (current.report['newBatch'] === true) {
              // Eager folding folds each output as it ages, by design, and the economy batches when a batch pays
              // (its own properties are in economy*.property.test.ts): only budget-driven batches wait.
              const reason = (result.prepared.log?.['batch'] as { reason?: string } | undefined)?.reason
              if (chosen !== 'eager-fold' && reason === 'over_budget' && previous)
                expectHysteresis(previous.report, current.report)
            } else if (previous) {
              const before = withoutMarkers(fixture.list(previous.sent)).slice(0, -1)
              expect(withoutMarkers(fixture.list(current.sent)).startsWith(before)).toBe(true)
              expect(fixture.head(current.sent)).toBe(fixture.head(previous.sent))
            }
            previous = current
          }
        },
      ),
      { numRuns: 20 },
    )
  })

  it('never folds the newest 3 rounds, and never clears the newest result', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, windowSize, strategy, async (list, window, chosen) => {
        const original = fixture.body(list)
        const result = await createRewriter(fixture.format, window, { rewrite: { strategy: chosen } })(original)
        if (result.kind === 'reject') return
        const sent = sentBody(result)
        const recentIds = new Set(fixture.rounds(sent).slice(-3).flat())
        const results = fixture.results(sent)
        for (const entry of results)
          if (recentIds.has(entry.id)) expect(String(entry.content)).not.toMatch(/^\[ctxgate folded/)
        const newest = results.at(-1)
        if (newest)
          expect(newest.content).toEqual(fixture.results(original).find((entry) => entry.id === newest.id)?.content)
      }),
      { numRuns: 40 },
    )
  })
})

/**
 * After a batch that reached its low-water mark, the next batch waits until the conversation has grown
 * back past the budget: frozen decisions keep it from re-deciding sooner.
 */
function expectHysteresis(previous: Record<string, unknown>, current: Record<string, unknown>): void {
  const budget = Number(current['budget'])
  if (Number(previous['estimatedAfter']) > budget * 0.6) return
  const grown = Number(current['estimatedBefore']) - Number(previous['estimatedBefore'])
  expect(grown).toBeGreaterThan(budget - Number(previous['estimatedAfter']) - 10)
}

/** Where a body carries cache_control markers, as JSON paths. */
function markerPaths(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((entry, index) => markerPaths(entry, `${path}/${index}`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, entry]) =>
    key === 'cache_control' ? [path] : markerPaths(entry, `${path}/${key}`),
  )
}
