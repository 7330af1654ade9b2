import { describe, expect, it } from 'vitest'
import {
  Calibration,
  conversationMargin,
  defaultFactor,
  factorFrom,
  referenceMargin,
  type ConversationLesson,
} from '../../src/calibration/calibration.ts'

const model = 'claude-sonnet-4-5'

/**
 * New content sized by the reference vocabulary (docs/estimates.md): at the conversation's highest
 * actual ÷ reference ratio × the margin, never below what the conversation's newest ratio gives it
 * and never above the prior.
 */
describe('calibration of new content by a reference vocabulary', () => {
  it('sizes new content by its reference count when that is below the prior', async () => {
    const calibration = new Calibration()
    // 10,000 estimated, 8,000 by the reference, 7,000 counted: 0.875 tokens per reference token.
    await calibration.record(model, 10_000, 7_000, 'scope', { key: 'c', unedited: 10_000, reference: 8_000 })
    // 10,000 estimated tokens of new content the reference counts 9,000: sized 9,000 × 0.875 × margin.
    const factor = calibration.factor(model, { key: 'c', unedited: 20_000, reference: 17_000 }, 'scope')
    const known = 0.7 * conversationMargin
    const fresh = (9_000 * 0.875 * referenceMargin) / 10_000
    expect(fresh).toBeGreaterThan(known)
    expect(factor).toBeCloseTo(known * 0.5 + fresh * 0.5, 10)
    // The prior alone would have sized it at 1.15 a token.
    const prior = calibration.factor(model, { key: 'c', unedited: 20_000 }, 'scope')
    expect(prior).toBeCloseTo(known * 0.5 + defaultFactor * 0.5, 10)
    expect(factor).toBeLessThan(prior)
  })

  it('never sizes new content below the conversation’s newest ratio, whatever the reference says', () => {
    const own: ConversationLesson = {
      ratios: [0.9],
      unedited: 10_000,
      sent: 10_000,
      reference: 10_000,
      densities: [0.9],
    }
    // The reference counts the new content as almost nothing (say, one long run it merges).
    const factor = factorFrom({ modelWide: 0.9, own }, { key: 'c', unedited: 20_000, reference: 10_100 })
    expect(factor).toBeCloseTo(0.9 * conversationMargin, 10)
  })

  it('never sizes new content above the prior, even when its reference count is high', () => {
    const own: ConversationLesson = {
      ratios: [0.8],
      unedited: 10_000,
      sent: 10_000,
      reference: 5_000,
      densities: [1.6],
    }
    const factor = factorFrom({ modelWide: 0.8, own }, { key: 'c', unedited: 20_000, reference: 15_000 })
    expect(factor).toBeCloseTo(0.8 * conversationMargin * 0.5 + defaultFactor * 0.5, 10)
  })

  it('falls back to the prior without the reference count on either side', () => {
    const withCounts: ConversationLesson = {
      ratios: [0.7],
      unedited: 10_000,
      sent: 10_000,
      reference: 8_000,
      densities: [0.875],
    }
    const { reference: _reference, densities: _densities, ...withoutCounts } = withCounts
    const prior = 0.7 * conversationMargin * 0.5 + defaultFactor * 0.5
    // Not loaded for this request.
    expect(factorFrom({ modelWide: 0.7, own: withCounts }, { key: 'c', unedited: 20_000 })).toBeCloseTo(prior, 10)
    // Not loaded when the newest answer's request was sized.
    expect(
      factorFrom({ modelWide: 0.7, own: withoutCounts }, { key: 'c', unedited: 20_000, reference: 14_000 }),
    ).toBeCloseTo(prior, 10)
  })

  it('falls back to the prior when the newest answer’s request had no reference count (read in a worker)', () => {
    const own: ConversationLesson = { ratios: [0.7], unedited: 10_000, sent: 10_000, densities: [0.875] }
    const factor = factorFrom({ modelWide: 0.7, own }, { key: 'c', unedited: 20_000, reference: 17_000 })
    expect(factor).toBeCloseTo(0.7 * conversationMargin * 0.5 + defaultFactor * 0.5, 10)
  })

  it('sizes a whole rewritten prompt by its reference count', () => {
    const own: ConversationLesson = {
      ratios: [0.7],
      unedited: 10_000,
      sent: 10_000,
      reference: 8_000,
      densities: [0.875],
    }
    // The client compacted its history: 3,000 estimated, 2,700 by the reference, all of it new.
    const factor = factorFrom({ modelWide: 0.7, own }, { key: 'c', unedited: 3_000, reference: 2_700 })
    expect(factor).toBeCloseTo((2_700 * 0.875 * referenceMargin) / 3_000, 10)
  })

  it('learns the ratio to the reference from what went upstream, at the reference density of the client’s prompt', async () => {
    const calibration = new Calibration()
    // ctxgate cleared half the prompt; what went upstream is taken at the same reference density.
    await calibration.record(model, 5_000, 3_600, 'scope', { key: 'c', unedited: 10_000, reference: 8_000 })
    const density = 3_600 / (5_000 * 0.8)
    const factor = calibration.factor(model, { key: 'c', unedited: 15_000, reference: 12_000 }, 'scope')
    const known = (3_600 / 5_000) * conversationMargin
    const fresh = (4_000 * density * referenceMargin) / 5_000
    expect(factor).toBeCloseTo(known * 0.5 + fresh * 0.5, 10)
  })

  it('sizes by the highest of the conversation’s newest ratios to the reference', async () => {
    const calibration = new Calibration()
    await calibration.record(model, 10_000, 9_000, 'scope', { key: 'c', unedited: 10_000, reference: 8_000 })
    await calibration.record(model, 20_000, 14_000, 'scope', { key: 'c', unedited: 20_000, reference: 16_000 })
    const factor = calibration.factor(model, { key: 'c', unedited: 30_000, reference: 22_000 }, 'scope')
    const known = 0.7 * conversationMargin
    const fresh = Math.max(known, (6_000 * (9_000 / 8_000) * referenceMargin) / 10_000)
    expect(factor).toBeCloseTo(known * (2 / 3) + fresh / 3, 10)
  })

  it('ignores a malformed reference count in a shared memory', async () => {
    const memory = { ratios: [0.7], unedited: 10_000, sent: 10_000 }
    const prior = 0.7 * conversationMargin * 0.5 + defaultFactor * 0.5
    for (const broken of [
      { ...memory, reference: 'x', densities: [0.9] },
      { ...memory, reference: -5, densities: [0.9] },
      { ...memory, reference: 8_000, densities: 'x' },
      { ...memory, reference: 8_000, densities: [Number.NaN] },
    ]) {
      const calibration = new Calibration({
        load: async () => ({ ratios: [], conversation: broken as unknown as ConversationLesson }),
        pushRatio: async () => undefined,
        pushLimit: async () => undefined,
        clearLimit: async () => undefined,
      })
      await calibration.refresh(model, 'scope', 'c')
      expect(calibration.factor(model, { key: 'c', unedited: 20_000, reference: 14_000 }, 'scope')).toBeCloseTo(
        prior,
        10,
      )
    }
  })
})
