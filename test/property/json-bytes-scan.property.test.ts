import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { topLevelMembers } from '../../src/util/json-members.ts'
import { endOfJsonStringInBytes } from '../../src/util/json-scan.ts'
import { stringScanInBytes } from '../helpers/string-json/in-bytes.ts'

/** JSON text with spaces, tabs and newlines between some tokens, as a client might write it. */
const spaced = (text: string, seed: number): string =>
  text.replace(/([,:[\]{}])(?=(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*$)/g, (token, _match, offset: number) =>
    (offset + seed) % 3 === 0 ? `${token} \n\t` : token,
  )

describe('scanning a body as UTF-8 bytes', () => {
  it('finds the members and elements the string scan found, at the same places counted in bytes (fast-check)', () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }),
      fc.array(fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }), { maxLength: 6 }),
      // Literals a double cannot hold: both scans give up on the body.
      fc.constantFrom('1e400', '12345678901234567890', '-0.5E-3'),
    )
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ unit: 'grapheme', maxLength: 6 }), value), { maxLength: 6 }),
        fc.nat(),
        (entries, seed) => {
          const literal = (item: unknown): string =>
            typeof item === 'string' && /^[-\d]/.test(item) ? item : JSON.stringify(item)
          const text = spaced(
            `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${literal(item)}`).join(',')}}`,
            seed,
          )
          expect(topLevelMembers(Buffer.from(text))).toEqual(stringScanInBytes(text))
        },
      ),
      { numRuns: 500 },
    )
  })

  it('ends a string at its closing quote, never at an escaped one (fast-check)', () => {
    const quoted = fc
      .oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 40 }))
      .map((text) => text.replaceAll('x', '"').replaceAll('y', '\\'))
    fc.assert(
      fc.property(quoted, fc.string({ maxLength: 10 }), (inside, after) => {
        const literal = JSON.stringify(inside)
        const bytes = Buffer.from(`${literal}${after}`)
        expect(endOfJsonStringInBytes(bytes, 0)).toBe(Buffer.byteLength(literal))
      }),
      { numRuns: 500 },
    )
  })
})
