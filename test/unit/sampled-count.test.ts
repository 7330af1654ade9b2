import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { sampledCounter } from '../../src/rewrite/sampled-count.ts'
import { estimateTextTokens } from '../../src/rewrite/estimate-text.ts'
import { contentKinds, counters } from '../helpers/content-kinds.ts'

const cl100k = counters['cl100k'] as (text: string) => number
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe('a reference count on samples of a long text', () => {
  it('counts a text up to the threshold exactly', () => {
    const text = contentKinds.code(20).slice(0, 2_048)
    expect(sampledCounter(cl100k, estimateTextTokens)(text)).toBe(cl100k(text))
  })

  it('stays within 5% of the whole count on long texts of one kind', () => {
    const sampled = sampledCounter(cl100k, estimateTextTokens)
    for (const text of [
      contentKinds.prose(300),
      contentKinds.code(400),
      contentKinds.json(300),
      contentKinds.japanese(300),
      contentKinds.base64(200),
      contentKinds.listing(300),
    ]) {
      expect(text.length).toBeGreaterThan(2_048)
      expect(sampled(text) / cl100k(text)).toBeGreaterThan(0.95)
      expect(sampled(text) / cl100k(text)).toBeLessThan(1.05)
    }
  })

  it('counts only the samples, whatever the text’s length', () => {
    let counted = 0
    const sampled = sampledCounter((text) => {
      counted += text.length
      return cl100k(text)
    }, estimateTextTokens)
    sampled(contentKinds.code(4_000))
    expect(counted).toBeLessThanOrEqual(4 * 513)
  })

  it('scales the whole text’s estimate as given (a memo), estimating only the samples itself', () => {
    const text = contentKinds.code(4_000)
    const estimatedChars: number[] = []
    const wholes: string[] = []
    const sampled = sampledCounter(
      cl100k,
      (piece) => {
        estimatedChars.push(piece.length)
        return estimateTextTokens(piece)
      },
      (whole) => {
        wholes.push(whole)
        return estimateTextTokens(whole)
      },
    )
    expect(sampled(text)).toBe(sampledCounter(cl100k, estimateTextTokens)(text))
    expect(wholes).toEqual([text])
    expect(Math.max(...estimatedChars)).toBeLessThanOrEqual(513)
  })

  it('in the estimator, the whole text is estimated once for the prompt and its reference count', () => {
    const text = contentKinds.code(4_000)
    const estimator = new TokenEstimator({
      counterFor: () => undefined,
      ready: () => Promise.resolve(),
      reference: () => cl100k,
    })
    const reference = estimator.reference() as TokenEstimator
    expect(reference.text(text)).toBe(sampledCounter(cl100k, estimateTextTokens)(text))
    expect(estimator.text(text)).toBe(estimateTextTokens(text))
  })

  it('never cuts a surrogate pair in half', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 2_100, maxLength: 2_600 }), (text) => {
        const pieces: string[] = []
        sampledCounter((piece) => {
          pieces.push(piece)
          return piece.length
        }, estimateTextTokens)(text)
        for (const piece of pieces) expect(loneSurrogate.test(piece)).toBe(false)
      }),
      { numRuns: 30 },
    )
  })
})

describe('the reference beside an exact counter of the same vocabulary', () => {
  it('never serves its sampled count as a model’s exact count (cl100k is both for gpt-4)', () => {
    // A counter whose count is easy to state: one token per character.
    const perChar = (text: string): number => text.length
    const estimator = new TokenEstimator({
      counterFor: (model) => (model === 'gpt-4' ? perChar : undefined),
      ready: async () => {},
      reference: () => perChar,
    })
    // Two halves of different density: a sampled count scales the estimate, an exact one does not.
    const text = `${'a'.repeat(3_000)}${' word'.repeat(1_000)}`
    expect(estimator.reference()?.text(text)).not.toBe(text.length)
    expect(estimator.forModel('gpt-4').text(text)).toBe(text.length)
  })
})
