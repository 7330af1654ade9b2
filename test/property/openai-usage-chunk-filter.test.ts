import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createUsageChunkFilter } from '../../src/providers/openai/hide-usage-chunk.ts'

const frame = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`

describe('hiding an injected usage chunk', () => {
  it('gives the client the stream it asked for, whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (words, cuts) => {
          const withUsage = [
            ...words.map((word, index) =>
              frame({ id: 'c', choices: [{ index: 0, delta: { content: word } }], usage: null, n: index }),
            ),
            frame({ id: 'c', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }),
            'data: [DONE]\n\n',
          ].join('')
          const expected = [
            ...words.map((word, index) =>
              frame({ id: 'c', choices: [{ index: 0, delta: { content: word } }], n: index }),
            ),
            'data: [DONE]\n\n',
          ].join('')
          const bytes = Buffer.from(withUsage)
          const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].toSorted((a, b) => a - b)
          const filter = createUsageChunkFilter()
          const out: Buffer[] = []
          let start = 0
          for (const point of [...points, bytes.length]) {
            out.push(filter.push(bytes.subarray(start, point)))
            start = point
          }
          out.push(filter.end())
          expect(Buffer.concat(out).toString('utf8')).toBe(expected)
        },
      ),
      { numRuns: 200 },
    )
  })
})
