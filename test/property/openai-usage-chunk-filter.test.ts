import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createUsageChunkFilter } from '../../src/providers/openai/hide-usage-chunk.ts'
import type { ChunkFilter } from '../../src/stream/chunk-filter.ts'

const frame = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`

/** Feeds `bytes` to a fresh filter cut at `cuts` (any chunking) and returns what the client gets. */
function filtered(bytes: Buffer, cuts: readonly number[], filter: ChunkFilter = createUsageChunkFilter()): Buffer {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].toSorted((a, b) => a - b)
  const out: Buffer[] = []
  let start = 0
  for (const point of [...points, bytes.length]) {
    out.push(filter.push(bytes.subarray(start, point)))
    start = point
  }
  out.push(filter.end())
  return Buffer.concat(out)
}

const lineEnd = fc.constantFrom('\n', '\r\n', '\r')
const dataPrefix = fc.constantFrom('data: ', 'data:')

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
          expect(filtered(Buffer.from(withUsage), cuts).toString('utf8')).toBe(expected)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('does not leak the hidden usage chunk of a CRLF- or CR-framed stream, or of `data:{` without a space', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 6 }),
        lineEnd,
        dataPrefix,
        fc.array(fc.nat(), { maxLength: 12 }),
        (words, end, prefix, cuts) => {
          const event = (data: unknown) => `${prefix}${JSON.stringify(data)}${end}${end}`
          const delta = (word: string, usage: boolean) =>
            event({ id: 'c', choices: [{ index: 0, delta: { content: word } }], ...(usage ? { usage: null } : {}) })
          const withUsage = [
            ...words.map((word) => delta(word, true)),
            event({ id: 'c', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }),
            `${prefix}[DONE]${end}${end}`,
          ].join('')
          const expected = [...words.map((word) => delta(word, false)), `${prefix}[DONE]${end}${end}`].join('')
          expect(filtered(Buffer.from(withUsage), cuts).toString('utf8')).toBe(expected)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('passes every frame it does not change byte for byte, invalid UTF-8 and comments included', () => {
    const untouchedLine = fc.oneof(
      fc.string({ maxLength: 30 }).map((text) => `: ${text.replace(/[\r\n]/g, ' ')}`),
      fc.string({ maxLength: 30 }).map((text) => `data: ${JSON.stringify({ id: 'c', text })}`),
      fc.constant('event: ping'),
      fc.constant('data: [DONE]'),
    )
    fc.assert(
      fc.property(
        fc.array(fc.tuple(untouchedLine, lineEnd, fc.boolean()), { maxLength: 12 }),
        fc.uint8Array({ maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (lines, tailBytes, cuts) => {
          const text = lines.map(([line, end, blank]) => line + end + (blank ? end : '')).join('')
          const bytes = Buffer.concat([Buffer.from(text), Buffer.from(tailBytes)])
          expect(filtered(bytes, cuts).equals(bytes)).toBe(true)
        },
      ),
      { numRuns: 300 },
    )
  })
})
