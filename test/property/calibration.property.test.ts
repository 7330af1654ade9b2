import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  Calibration,
  conversationMargin,
  defaultFactor,
  factorFrom,
  maxRatio,
  minRatio,
  type ConversationRequest,
} from '../../src/calibration/calibration.ts'
import { factorCeiling } from '../../src/calibration/factor-ceiling.ts'

const model = 'claude-sonnet-4-5'
const scope = 'tenant:a'

/** A piece of content: its estimate and how many real tokens each estimated one turns out to be. */
const chunk = fc.record({
  estimate: fc.integer({ min: 1, max: 30_000 }),
  // No harder to count than the prior assumes of content nobody has counted yet.
  ratio: fc.double({ min: minRatio, max: defaultFactor, noNaN: true }),
})

/** Answers of other conversations in the same pool, of any content, between this one's requests. */
const otherAnswers = fc.array(
  fc.record({
    estimate: fc.integer({ min: 1, max: 100_000 }),
    ratio: fc.double({ min: minRatio, max: maxRatio, noNaN: true }),
  }),
  { maxLength: 3 },
)

const conversation = fc.record({
  first: fc.array(fc.record({ content: chunk, cleared: fc.boolean() }), { minLength: 1, maxLength: 6 }),
  steps: fc.array(fc.record({ added: fc.array(chunk, { maxLength: 4 }), others: otherAnswers }), {
    minLength: 1,
    maxLength: 12,
  }),
})

describe('calibration after a conversation’s first answer', () => {
  it('never sizes a request below what the upstream counts, whatever the mix of content it adds', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, async ({ first, steps }) => {
        const calibration = new Calibration()
        // The first request's chunks ctxgate cleared stay cleared (frozen edits); chunk 0 is always sent.
        const sent = first.filter((entry, index) => index === 0 || !entry.cleared).map((entry) => entry.content)
        let unedited = first.reduce((sum, entry) => sum + entry.content.estimate, 0)
        const answer = async (): Promise<void> => {
          const estimated = sent.reduce((sum, piece) => sum + piece.estimate, 0)
          const actual = sent.reduce((sum, piece) => sum + piece.estimate * piece.ratio, 0)
          await calibration.record(model, estimated, actual, scope, { key: 'this', unedited })
        }
        await answer()
        for (const [index, step] of steps.entries()) {
          for (const [other, { estimate, ratio }] of step.others.entries())
            await calibration.record(model, estimate, estimate * ratio, scope, {
              key: `other-${index}-${other}`,
              unedited: estimate,
            })
          sent.push(...step.added)
          unedited += step.added.reduce((sum, piece) => sum + piece.estimate, 0)
          const estimated = sent.reduce((sum, piece) => sum + piece.estimate, 0)
          const actual = sent.reduce((sum, piece) => sum + piece.estimate * piece.ratio, 0)
          const factor = calibration.factor(model, { key: 'this', unedited }, scope)
          expect(factor * estimated).toBeGreaterThanOrEqual(actual * (1 - 1e-9))
          await answer()
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('calibration when the request also makes a batch', () => {
  it('sizes what is left at or above the upstream count, however much old content the batch clears', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_000, max: 150_000 }),
        fc.double({ min: minRatio, max: maxRatio, noNaN: true }),
        fc.array(chunk, { minLength: 1, maxLength: 4 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (old, oldRatio, added, clearedShare) => {
          const calibration = new Calibration()
          await calibration.record(model, old, old * oldRatio, scope, { key: 'this', unedited: old })
          const addedEstimate = added.reduce((sum, piece) => sum + piece.estimate, 0)
          const kept = old * (1 - clearedShare)
          const estimated = kept + addedEstimate
          const actual = kept * oldRatio + added.reduce((sum, piece) => sum + piece.estimate * piece.ratio, 0)
          // As the hook settles it: sized for what goes upstream after this request's own edits.
          const sized = { key: 'this', unedited: old + addedEstimate, sentAfterEdits: estimated }
          expect(calibration.factor(model, sized, scope) * estimated).toBeGreaterThanOrEqual(actual * (1 - 1e-9))
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('calibration from a conversation’s memory', () => {
  const lesson = fc.record({
    ratios: fc.array(fc.double({ min: minRatio, max: maxRatio, noNaN: true }), { minLength: 1, maxLength: 8 }),
    unedited: fc.integer({ min: 0, max: 200_000 }),
    sent: fc.integer({ min: 1, max: 200_000 }),
  })
  const modelWide = fc.double({ min: minRatio, max: maxRatio * 1.02, noNaN: true })

  it('sizes between its newest ratio + 3% and the prior for new content', () => {
    fc.assert(
      fc.property(lesson, modelWide, fc.integer({ min: 0, max: 300_000 }), (own, wide, unedited) => {
        const factor = factorFrom({ modelWide: wide, own }, { key: 'c', unedited })
        const known = (own.ratios[own.ratios.length - 1] as number) * conversationMargin
        expect(factor).toBeGreaterThanOrEqual(known * (1 - 1e-12))
        expect(factor).toBeLessThanOrEqual(Math.max(known, wide, defaultFactor) * (1 + 1e-12))
      }),
      { numRuns: 500 },
    )
  })

  it('never sizes above its ceiling, whatever the request adds, clears or the reference counts', () => {
    fc.assert(
      fc.property(
        fc.option(lesson.map((own) => ({ ...own, reference: own.unedited, densities: own.ratios }))),
        modelWide,
        fc.integer({ min: 0, max: 300_000 }),
        fc.option(fc.integer({ min: 0, max: 300_000 })),
        fc.option(fc.integer({ min: 1, max: 300_000 })),
        (own, wide, unedited, sentAfterEdits, reference) => {
          const inputs = own === null ? { modelWide: wide } : { modelWide: wide, own }
          const request = {
            key: 'c',
            unedited,
            ...(sentAfterEdits === null ? {} : { sentAfterEdits }),
            ...(reference === null ? {} : { reference }),
          }
          expect(factorFrom(inputs, request)).toBeLessThanOrEqual(factorCeiling(inputs))
          expect(factorFrom(inputs)).toBeLessThanOrEqual(factorCeiling(inputs))
        },
      ),
      { numRuns: 1_000 },
    )
  })

  it('never sizes lower for more new content or for a batch that leaves less of the old (the re-plan only rises)', () => {
    fc.assert(
      fc.property(
        lesson,
        modelWide,
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (own, wide, added, more, cleared) => {
          const unedited = own.unedited + added
          const factor = (request: { unedited: number; sentAfterEdits?: number }): number =>
            factorFrom({ modelWide: wide, own }, { key: 'c', ...request })
          expect(factor({ unedited: unedited + more })).toBeGreaterThanOrEqual(factor({ unedited }) * (1 - 1e-12))
          const after = (own.sent + added) * (1 - cleared)
          if (after > 0)
            expect(factor({ unedited, sentAfterEdits: after })).toBeGreaterThanOrEqual(
              factor({ unedited }) * (1 - 1e-12),
            )
        },
      ),
      { numRuns: 500 },
    )
  })
})

describe('calibration with a reference vocabulary’s count', () => {
  /** A piece of content as the reference vocabulary counts it: per estimated token, and the upstream's count per reference token. */
  const counted = fc.record({
    estimate: fc.integer({ min: 1, max: 30_000 }),
    ratio: fc.double({ min: minRatio, max: defaultFactor, noNaN: true }),
  })

  it('never sizes a request below the upstream count when the upstream counts like the reference, up to one factor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(counted, { minLength: 1, maxLength: 4 }),
        fc.array(fc.array(counted, { maxLength: 4 }), { minLength: 1, maxLength: 10 }),
        // Upstream tokens per reference token: the same for every kind of content (as for another BPE vocabulary).
        fc.double({ min: 0.8, max: 1.3, noNaN: true }),
        async (first, steps, perReference) => {
          const calibration = new Calibration()
          const sent = [...first]
          const sum = (pick: (piece: { estimate: number; ratio: number }) => number): number =>
            sent.reduce((total, piece) => total + pick(piece), 0)
          // The upstream count is the reference's × perReference; `ratio` is that count per estimated token.
          const actual = (): number => sum((piece) => piece.estimate * piece.ratio)
          const sized = (): ConversationRequest => ({
            key: 'this',
            unedited: sum((piece) => piece.estimate),
            reference: actual() / perReference,
          })
          await calibration.record(
            model,
            sum((piece) => piece.estimate),
            actual(),
            scope,
            sized(),
          )
          for (const added of steps) {
            sent.push(...added)
            const estimated = sum((piece) => piece.estimate)
            const factor = calibration.factor(model, sized(), scope)
            expect(factor * estimated).toBeGreaterThanOrEqual(actual() * (1 - 1e-9))
            await calibration.record(model, estimated, actual(), scope, sized())
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('sizes new content between the conversation’s newest ratio + 3% and what the prior alone gives it', () => {
    const lesson = fc.record({
      ratios: fc.array(fc.double({ min: minRatio, max: maxRatio, noNaN: true }), { minLength: 1, maxLength: 8 }),
      unedited: fc.integer({ min: 0, max: 200_000 }),
      sent: fc.integer({ min: 1, max: 200_000 }),
      reference: fc.integer({ min: 1, max: 200_000 }),
      densities: fc.array(fc.double({ min: minRatio, max: maxRatio, noNaN: true }), { minLength: 1, maxLength: 8 }),
    })
    fc.assert(
      fc.property(
        lesson,
        fc.double({ min: minRatio, max: maxRatio * 1.02, noNaN: true }),
        fc.integer({ min: 0, max: 300_000 }),
        fc.integer({ min: 0, max: 300_000 }),
        (own, modelWide, unedited, reference) => {
          const withReference = factorFrom({ modelWide, own }, { key: 'c', unedited, reference })
          const priorOnly = factorFrom({ modelWide, own }, { key: 'c', unedited })
          const known = (own.ratios[own.ratios.length - 1] as number) * conversationMargin
          expect(withReference).toBeGreaterThanOrEqual(known * (1 - 1e-12))
          expect(withReference).toBeLessThanOrEqual(priorOnly * (1 + 1e-12))
        },
      ),
      { numRuns: 500 },
    )
  })
})
