import { describe, expect, it } from 'vitest'
import { limitsFor, promptBudget } from '../../src/config/model-limits.ts'
import { globToRegExp } from '../../src/util/glob.ts'
import { loadConfig } from '../../src/config/load-config.ts'
import { chooseBreakpoints } from '../../src/providers/anthropic/breakpoint-rules.ts'
import { Calibration, defaultFactor } from '../../src/calibration/calibration.ts'
import { modelFamily } from '../../src/providers/model-family.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { estimateTextTokens } from '../../src/rewrite/estimate-text.ts'
import { hashText } from '../../src/rewrite/hash.ts'
import { foldSummary } from '../../src/rewrite/notes.ts'
import { identify } from '../../src/session/identity.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import { noDecisions } from '../../src/rewrite/types.ts'

describe('estimateTextTokens', () => {
  it('counts dense text densely and prose lightly', () => {
    const prose = 'The quick brown fox jumps over the lazy dog and keeps running. '.repeat(20)
    const hex = 'a3f9c2e1b4d58e7f'.repeat(80)
    const cjk = '注文は支払いの再送後に消えました'.repeat(20)
    expect(prose.length / estimateTextTokens(prose)).toBeGreaterThan(3)
    expect(hex.length / estimateTextTokens(hex)).toBeLessThan(3)
    expect(estimateTextTokens(cjk)).toBeGreaterThanOrEqual(cjk.length)
    expect(estimateTextTokens('')).toBe(0)
    expect(estimateTextTokens('😀😀')).toBeGreaterThanOrEqual(2)
  })

  it('stays linear on pathological runs that make BPE tokenizers quadratic', () => {
    const started = performance.now()
    estimateTextTokens('a'.repeat(2_000_000))
    estimateTextTokens('-'.repeat(2_000_000))
    // Generous: a quadratic counter would take minutes here.
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it('memoises long blocks and counts values as their JSON', () => {
    const estimator = new TokenEstimator()
    const text = 'x y z '.repeat(200)
    expect(estimator.text(text)).toBe(estimateTextTokens(text))
    expect(estimator.text(text)).toBe(estimateTextTokens(text))
    expect(estimator.value({ a: [1, 2] })).toBe(estimateTextTokens('{"a":[1,2]}'))
  })
})

describe('Calibration', () => {
  it('starts conservative, then follows the largest recent ratio per model family', () => {
    const calibration = new Calibration()
    expect(calibration.factor('claude-sonnet-4-5')).toBe(defaultFactor)
    calibration.record('claude-sonnet-4-5-20250929', 1_000, 900)
    calibration.record('claude-sonnet-4-5', 1_000, 1_100)
    expect(calibration.factor('claude-sonnet-4-5')).toBeCloseTo(1.1 * 1.02)
    expect(calibration.factor('claude-opus-4-8')).toBe(defaultFactor)
    expect(modelFamily('claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5')
  })
})

describe('chooseBreakpoints', () => {
  const candidates = [
    { name: 'rolling' as const, position: 40, prefixTokens: 9_000 },
    { name: 'previous-tail' as const, position: 30, prefixTokens: 8_000 },
    { name: 'system' as const, position: 5, prefixTokens: 3_000 },
    { name: 'tools' as const, position: 3, prefixTokens: 2_000 },
  ]

  it('fills free slots in order of value, never more than 4 in all', () => {
    expect(
      chooseBreakpoints({ existing: [], automatic: false, candidates, minCacheableTokens: 1_024 }).map((c) => c.name),
    ).toEqual(['rolling', 'previous-tail', 'system', 'tools'])
    expect(
      chooseBreakpoints({
        existing: [
          { position: 1, ttl: '5m' },
          { position: 2, ttl: '5m' },
        ],
        automatic: false,
        candidates,
        minCacheableTokens: 1_024,
      }),
    ).toHaveLength(2)
    expect(
      chooseBreakpoints({
        existing: [{ position: 1, ttl: '5m' }],
        automatic: true,
        candidates,
        minCacheableTokens: 1_024,
      }).map((c) => c.name),
    ).toEqual(['previous-tail', 'system'])
  })

  it('never puts a 5-minute marker before a 1-hour one, on a taken position, or on a short prefix', () => {
    expect(
      chooseBreakpoints({
        existing: [{ position: 30, ttl: '1h' }],
        automatic: false,
        candidates,
        minCacheableTokens: 1_024,
      }).map((c) => c.name),
    ).toEqual(['rolling'])
    expect(
      chooseBreakpoints({ existing: [], automatic: false, candidates, minCacheableTokens: 8_500 }).map((c) => c.name),
    ).toEqual(['rolling'])
  })

  it('puts a 1-hour marker on the stable head only before every 5-minute one', () => {
    const head = candidates.map((candidate) =>
      candidate.name === 'system' || candidate.name === 'tools' ? { ...candidate, ttl: '1h' as const } : candidate,
    )
    const chosen = chooseBreakpoints({ existing: [], automatic: false, candidates: head, minCacheableTokens: 1_024 })
    expect(chosen.map((c) => `${c.name}:${c.ttl ?? '5m'}`)).toEqual([
      'rolling:5m',
      'previous-tail:5m',
      'system:1h',
      'tools:1h',
    ])
    // A client's 5-minute marker in the tools (position 1) comes first: a 1-hour one after it would be refused.
    expect(
      chooseBreakpoints({
        existing: [{ position: 1, ttl: '5m' }],
        automatic: false,
        candidates: head,
        minCacheableTokens: 1_024,
      }).map((c) => c.name),
    ).toEqual(['rolling', 'previous-tail'])
    // A 1-hour head marker keeps a later 5-minute candidate from going before it.
    expect(
      chooseBreakpoints({
        existing: [],
        automatic: false,
        candidates: [{ name: 'tools', position: 10, prefixTokens: 2_000, ttl: '1h' }, candidates[2]!],
        minCacheableTokens: 1_024,
      }).map((c) => c.name),
    ).toEqual(['tools'])
  })
})

describe('notes and hashes', () => {
  it('summarises an output deterministically, with its size, exit status and first meaningful line', () => {
    const text = '=====\n\nFAIL src/a.test.ts\nexpected 1 got 2\nexit code: 1\n'
    expect(foldSummary(text)).toBe(foldSummary(text))
    expect(foldSummary(text)).toContain('exit status 1')
    expect(foldSummary(text)).toContain('"FAIL src/a.test.ts"')
    expect(hashText('abc')).toBe(hashText('abc'))
    expect(hashText('abc')).not.toBe(hashText('abd'))
  })
})

describe('model limits', () => {
  it('matches globs, first match first', () => {
    const config = loadConfig()
    expect(limitsFor(config, 'claude-fable-5-1')?.thinkingBoundToPrefix).toBe(true)
    expect(limitsFor(config, 'claude-opus-4-6-20260101')?.minCacheableTokens).toBe(4_096)
    expect(limitsFor(config, 'claude-sonnet-4-5-20250929')?.minCacheableTokens).toBe(1_024)
    expect(limitsFor(config, 'llama')?.window).toBe(128_000)
    expect(globToRegExp('a[0-9]?*').test('a7xyz')).toBe(true)
    expect(globToRegExp('a.b').test('axb')).toBe(false)
  })

  it('takes max_tokens off and lets a header lower the budget', () => {
    const limits = { match: '*', window: 100_000, budget: 0.9, minCacheableTokens: 0, thinkingBoundToPrefix: false }
    expect(promptBudget(limits, 4_000, undefined)).toBe(90_000)
    expect(promptBudget(limits, 20_000, undefined)).toBe(80_000)
    expect(promptBudget(limits, 0, 5_000)).toBe(5_000)
    expect(promptBudget({ ...limits, budget: 50_000 }, 0, undefined)).toBe(50_000)
  })
})

describe('sessions', () => {
  it('identifies by header, then client id, then content; conversations apart within one id', () => {
    expect(identify({ 'x-ctxgate-session': 'abc' }, { explicit: 'user', fingerprint: 'f1' })).toMatchObject({
      sessionId: 'abc',
      conversationKey: 'abc/f1',
    })
    expect(identify({}, { explicit: 'user_1', fingerprint: 'f2' })).toMatchObject({
      sessionId: 'user_1',
      conversationKey: 'user_1/f2',
    })
    expect(identify({}, { fingerprint: 'f3' })).toMatchObject({ sessionId: 'h-f3', conversationKey: 'h-f3/f3' })
  })

  it('keeps the most recently used entries and forgets idle ones', async () => {
    let now = 0
    const store = new MemorySessionStore({ maxEntries: 2, idleTtlMs: 1_000, now: () => now })
    const state = (lastSeen: number) => ({ decisions: noDecisions, requests: 1, lastSeen })
    await store.set('a', state(0))
    await store.set('b', state(0))
    await store.get('a')
    await store.set('c', state(0))
    expect(await store.get('b')).toBeUndefined()
    expect(await store.get('a')).toBeDefined()
    now = 5_000
    expect(await store.get('c')).toBeUndefined()
    expect(store.size()).toBe(1)
  })
})
