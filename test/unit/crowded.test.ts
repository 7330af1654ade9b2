import { describe, expect, it } from 'vitest'
import {
  crowdedAbove,
  crowdedByRestores,
  crowdedShare,
  reachBehindMarker,
  restoreToGiveUp,
} from '../../src/rewrite/crowded.ts'
import type { ToolResultView } from '../../src/rewrite/types.ts'
import { testPolicy, viewOf, viewRound } from '../helpers/chat-view.ts'

const limits = { budget: 10_000, policy: { ...testPolicy, lowWater: 0.6 }, factor: 1 }
const results = (...tokens: number[]): ToolResultView[] =>
  tokens.map((count, index) => ({ id: `r${index}`, tokens: count }) as unknown as ToolResultView)

describe('a crowded request', () => {
  it('is past halfway from the low-water mark to the budget', () => {
    expect(crowdedShare).toBe(0.5)
    expect(crowdedAbove(limits)).toBe(8_000)
    expect(crowdedAbove({ ...limits, policy: { ...testPolicy, lowWater: 0.8 } })).toBe(9_000)
  })

  it('over the budget, a forced cut clears results behind the marker, whatever they free', () => {
    expect(reachBehindMarker(10_001, results(60), 10, limits)).toBe(true)
  })

  it('crowded, only when clearing them takes the request out of it (counted at the factor, less their notes)', () => {
    expect(reachBehindMarker(9_500, results(1_000, 600), 50, limits)).toBe(true)
    // 1,500 - 2 × 50 freed: 8,100 is still crowded, so the rewrite from far back would not spare the next cut.
    expect(reachBehindMarker(9_600, results(1_000, 600), 50, limits)).toBe(false)
    expect(reachBehindMarker(9_600, results(1_000, 600), 50, { ...limits, factor: 1.2 })).toBe(true)
  })

  it('not crowded, or nothing held: the marker holds', () => {
    expect(reachBehindMarker(8_000, results(5_000), 10, limits)).toBe(false)
    expect(reachBehindMarker(9_900, [], 10, limits)).toBe(false)
  })
})

describe('restores in a crowded request', () => {
  const restored = results(1_000, 600)
  // Two rounds: r0 in message 2, r1 in message 4; neither quoted since, so the older goes first.
  const view = viewOf([viewRound(1_000, 'r0'), viewRound(600, 'r1')])

  it('leave it crowded only when one was made and the estimate is past the line', () => {
    expect(crowdedByRestores(8_001, restored, limits)).toBe(true)
    expect(crowdedByRestores(8_000, restored, limits)).toBe(false)
    expect(crowdedByRestores(9_000, [], limits)).toBe(false)
  })

  it('are given up one at a time, the least needed first (a forced cut’s order), and none when out of crowded', () => {
    expect(restoreToGiveUp(8_500, restored, { ...limits, view })?.id).toBe('r0')
    expect(restoreToGiveUp(8_500, restored.slice(1), { ...limits, view })?.id).toBe('r1')
    expect(restoreToGiveUp(7_900, restored, { ...limits, view })).toBeUndefined()
  })
})
