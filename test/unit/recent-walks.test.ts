import { describe, expect, it } from 'vitest'
import { RecentWalks } from '../../src/util/recent-walks.ts'

const shareOf = (text: string) => (kept: string) => {
  let index = 0
  while (index < kept.length && kept[index] === text[index]) index++
  return index
}
const exactly = (text: string) => (kept: string, shared: number) =>
  shared === text.length && kept.length === text.length

describe('recent walks', () => {
  it('goes on from the kept walk sharing the most, the newest of equals', () => {
    const walks = new RecentWalks<string>(4)
    for (const walk of ['abx', 'abcy', 'abcz']) walks.keep(walk)
    expect(walks.longest(shareOf('abcd'), exactly('abcd'))).toEqual({ from: 'abcz', shared: 3, whole: false })
  })

  it('answers at once with a walk that is the entire request', () => {
    const walks = new RecentWalks<string>(4)
    for (const walk of ['abc', 'abcd']) walks.keep(walk)
    expect(walks.longest(shareOf('abc'), exactly('abc'))).toEqual({ from: 'abc', shared: 3, whole: true })
  })

  it('shares nothing with none kept, and keeps only the newest few', () => {
    const walks = new RecentWalks<string>(2)
    expect(walks.longest(shareOf('a'), exactly('a'))).toEqual({ from: undefined, shared: 0, whole: false })
    for (const walk of ['a1', 'b2', 'c3']) walks.keep(walk)
    expect([...walks]).toEqual(['c3', 'b2'])
  })
})
