import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RecentWalks } from '../../src/util/recent-walks.ts'

const shareOf = (text: string) => (kept: string) => {
  let index = 0
  while (index < kept.length && kept[index] === text[index]) index++
  return index
}
const exactly = (text: string) => (kept: string, shared: number) =>
  shared === text.length && kept.length === text.length
const mostOf = (text: string) => (kept: string) => Math.min(kept.length, text.length)

/** What `longest` answered before it passed over walks too short to win: every kept walk compared. */
function longestComparingAll(kept: readonly string[], text: string) {
  let from: string | undefined
  let shared = 0
  for (const walk of kept) {
    const length = shareOf(text)(walk)
    if (exactly(text)(walk, length)) return { from: walk, shared: length, whole: true }
    if (length > shared) [from, shared] = [walk, length]
  }
  return { from, shared, whole: false }
}

describe('recent walks', () => {
  it('goes on from the kept walk sharing the most, the newest of equals', () => {
    const walks = new RecentWalks<string>(4)
    for (const walk of ['abx', 'abcy', 'abcz']) walks.keep(walk)
    expect(walks.longest(shareOf('abcd'), exactly('abcd'), mostOf('abcd'))).toEqual({
      from: 'abcz',
      shared: 3,
      whole: false,
    })
  })

  it('answers at once with a walk that is the entire request', () => {
    const walks = new RecentWalks<string>(4)
    for (const walk of ['abc', 'abcd']) walks.keep(walk)
    expect(walks.longest(shareOf('abc'), exactly('abc'), mostOf('abc'))).toEqual({
      from: 'abc',
      shared: 3,
      whole: true,
    })
  })

  it('shares nothing with none kept, and keeps only the newest few', () => {
    const walks = new RecentWalks<string>(2)
    expect(walks.longest(shareOf('a'), exactly('a'), mostOf('a'))).toEqual({ from: undefined, shared: 0, whole: false })
    for (const walk of ['a1', 'b2', 'c3']) walks.keep(walk)
    expect([...walks]).toEqual(['c3', 'b2'])
  })

  it('compares only the newest walk of a growing conversation: the older ones are shorter than what it shares', () => {
    const walks = new RecentWalks<string>(4)
    for (const walk of ['ab', 'abcd', 'abcdef', 'abcdefgh']) walks.keep(walk)
    const compared: string[] = []
    const text = 'abcdefghij'
    const share = (kept: string) => {
      compared.push(kept)
      return shareOf(text)(kept)
    }
    expect(walks.longest(share, exactly(text), mostOf(text))).toEqual({ from: 'abcdefgh', shared: 8, whole: false })
    expect(compared).toEqual(['abcdefgh'])
  })

  it('prevents a skipped walk from changing the answer: the same as comparing every kept walk', () => {
    const walk = fc.string({ unit: fc.constantFrom('a', 'b'), maxLength: 6 })
    fc.assert(
      fc.property(fc.array(walk, { maxLength: 6 }), walk, (kept, text) => {
        const walks = new RecentWalks<string>(4)
        for (const one of kept) walks.keep(one)
        expect(walks.longest(shareOf(text), exactly(text), mostOf(text))).toEqual(longestComparingAll([...walks], text))
      }),
      { numRuns: 2000 },
    )
  })
})
