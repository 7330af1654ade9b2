import fc from 'fast-check'
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base'
import { beforeAll, describe, expect, it } from 'vitest'
import { exactCounter, loadExactCounter } from '../../src/providers/openai/tokenizer/exact-counters.ts'
import { countWithRunGuard } from '../../src/providers/openai/tokenizer/long-run-guard.ts'
import { pieceEnd } from '../../src/providers/openai/tokenizer/cl100k-split.ts'
import { piecewiseCounter } from '../../src/providers/openai/tokenizer/piecewise-count.ts'
import { contentKinds } from '../helpers/content-kinds.ts'

/** The library's own count, regex and all. */
const library = (text: string): number => countTokens(text, { disallowedSpecial: new Set() })

/** Characters (and a few short strings) each branch of cl100k's split regex turns on, ASCII and not, astral ones among them. */
const alphabet = [
  ..."aZq'sStTdDmMlLvVeErR",
  ...'0129',
  ...' \t\n\r\u000b\u000c',
  ...'.,;:{}()[]"/\\-_=+*#<>|!?`~@$%^&',
  'é',
  'ß',
  'Ж',
  'ж',
  '日',
  'ア',
  'ㄱ',
  '²',
  '٣',
  '½',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '→',
  '─',
  '—',
  '“',
  '😀',
  '𝒜',
  '𝟏',
  '\u{1F1EF}',
  '\u0301',
  // Contractions and near misses, whole: a random character sequence rarely spells one.
  "'m",
  "'ll",
  "'LL",
  "'ve",
  "'Re",
  "'d",
  "'T",
  "'x",
  "'l",
  'abc',
]
const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 120 }).map((chars) => chars.join(''))

/** cl100k's split regex, as gpt-tokenizer and tiktoken spell it. */
const splitRegex =
  /'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s/gu
const bmpText = fc
  .array(fc.constantFrom(...alphabet.filter((char) => !/[\uD800-\uDFFF]/.test(char))), { maxLength: 120 })
  .map((chars) => chars.join(''))

let cl100k: (text: string) => number
beforeAll(async () => {
  await loadExactCounter('cl100k_base')
  const counter = exactCounter('cl100k_base')
  if (!counter) throw new Error('gpt-tokenizer did not load')
  cl100k = counter
})

describe('cl100k counted piece by piece', () => {
  it('equals the library count on any mix of the characters its split turns on', () => {
    const counter = piecewiseCounter(library)
    fc.assert(
      fc.property(text, (sample) => {
        expect(counter(sample)).toBe(library(sample))
      }),
      { numRuns: 3_000 },
    )
  })

  it('splits text without astral characters into the regex’s own pieces', () => {
    fc.assert(
      fc.property(bmpText, (sample) => {
        const pieces: string[] = []
        for (let start = 0; start < sample.length;) {
          const end = pieceEnd(sample, start)
          pieces.push(sample.slice(start, end))
          start = end
        }
        expect(pieces).toEqual([...sample.matchAll(splitRegex)].map(([piece]) => piece))
      }),
      { numRuns: 3_000 },
    )
  })

  it('gives the uncached count again once every piece is memoised', () => {
    const counter = piecewiseCounter(library)
    const texts = [contentKinds.code(60), contentKinds.json(40), contentKinds.japanese(40), contentKinds.base64(30)]
    const first = texts.map(counter)
    expect(texts.map(counter)).toEqual(first)
    expect(first).toEqual(texts.map(library))
  })

  it('equals the library count on every generated kind of tool output', () => {
    const counter = piecewiseCounter(library)
    for (const [name, make] of Object.entries(contentKinds)) {
      const sample = make(80)
      expect({ name, tokens: counter(sample) }).toEqual({ name, tokens: library(sample) })
    }
  })

  it('leaves a stretch it cannot split to the library, and counts the clean lines after it itself', () => {
    const seen: string[] = []
    const counter = piecewiseCounter((piece) => {
      seen.push(piece)
      return library(piece)
    })
    const sample = 'ok 😀 fine\nnext line here\n'
    expect(counter(sample)).toBe(library(sample))
    expect(seen).toContain(' 😀 fine\n')
    expect(seen).toContain('next')
  })

  it('is what ctxgate counts cl100k with: the guarded library count, long runs and all', () => {
    const long = fc
      .tuple(text, fc.constantFrom('a', ' ', '\n', '=', 'é', '😀', '7'), fc.integer({ min: 200, max: 700 }), text)
      .map(([before, char, times, after]) => before + char.repeat(times) + after)
    fc.assert(
      fc.property(fc.oneof(text, long), (sample) => {
        expect(cl100k(sample)).toBe(countWithRunGuard(sample, library))
      }),
      { numRuns: 500 },
    )
  })
})
