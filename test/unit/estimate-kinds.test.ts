import { describe, expect, it } from 'vitest'
import { defaultFactor } from '../../src/calibration/calibration.ts'
import { estimateTextTokens } from '../../src/rewrite/estimate-text.ts'
import { contentKinds, counters } from '../helpers/content-kinds.ts'

/**
 * The calibration sizes content no upstream has counted yet at the prior (1.15 × the estimate), so
 * each kind of tool output must count at most that much, by every counter; and the estimate must not
 * run so high that it starts batches for nothing.
 */
/** Kinds that still count more than the prior by every counter (docs/estimates.md): numbers and the space before them. */
const knownOver = new Set(['listing', 'numbers', 'hexdump'])

describe('the token estimate of each kind of tool output', () => {
  for (const [kind, make] of Object.entries(contentKinds).filter(([name]) => !knownOver.has(name)))
    it(`${kind}: counts at most the prior times the estimate, and at least 0.45 of it`, () => {
      const text = make(300)
      const estimate = estimateTextTokens(text)
      for (const [name, count] of Object.entries(counters)) {
        const ratio = count(text) / estimate
        expect(ratio, `${kind} by ${name}`).toBeLessThanOrEqual(defaultFactor)
        expect(ratio, `${kind} by ${name}`).toBeGreaterThanOrEqual(0.45)
      }
    })
})
