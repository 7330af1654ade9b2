import { describe, expect, it } from 'vitest'
import { AnthropicPromptCache, OpenAIPromptCache, type PromptBlock } from '../../src/mock/prompt-cache.ts'

const blocks = (count: number, tokens = 100, marks: Record<number, '5m' | '1h'> = {}): PromptBlock[] =>
  Array.from({ length: count }, (_, index) => ({
    key: `block-${index}`,
    tokens,
    ...(marks[index] ? { breakpoint: marks[index] } : {}),
  }))

describe('AnthropicPromptCache cache-write readings', () => {
  // Request 1 writes the tail; request 2 marks block 10 inside what it reads; request 3 changes block 11 on.
  const edited = (count: number, marks: Record<number, '5m' | '1h'>): PromptBlock[] =>
    blocks(count, 100, marks).map((block, index) => (index > 10 ? { ...block, key: `${block.key}-edited` } : block))
  const run = (writes: 'literal' | 'strict') => {
    const cache = new AnthropicPromptCache(() => 0, writes)
    cache.use('m', blocks(20, 100, { 19: '5m' }), 1024)
    const second = cache.use('m', blocks(30, 100, { 10: '5m', 29: '5m' }), 1024)
    const third = cache.use('m', edited(30, { 10: '5m', 29: '5m' }), 1024)
    return { second, third }
  }

  it('bills the same request alike under both readings (the marker inside the read prefix is not billed)', () => {
    expect(run('strict').second).toEqual(run('literal').second)
    expect(run('literal').second).toMatchObject({ cacheReadTokens: 2000, cacheWrite5mTokens: 1000 })
  })

  it('literal: that marker wrote an entry the edited request reads; strict: it wrote none, so all is written again', () => {
    expect(run('literal').third).toMatchObject({ cacheReadTokens: 1100, cacheWrite5mTokens: 1900 })
    expect(run('strict').third).toMatchObject({ cacheReadTokens: 0, cacheWrite5mTokens: 3000 })
  })

  it('strict: a marker placed past what was read (the freshly written tail) writes its entry as literal does', () => {
    for (const writes of ['literal', 'strict'] as const) {
      const cache = new AnthropicPromptCache(() => 0, writes)
      cache.use('m', blocks(5, 100, { 4: '5m' }), 100)
      cache.use('m', blocks(30, 100, { 10: '5m', 29: '5m' }), 100)
      expect(cache.use('m', edited(30, { 10: '5m', 29: '5m' }), 100)).toMatchObject({ cacheReadTokens: 1100 })
    }
  })
})

describe('AnthropicPromptCache', () => {
  it('writes at a breakpoint, then reads the same prefix', () => {
    const cache = new AnthropicPromptCache(() => 0)
    expect(cache.use('m', blocks(20, 100, { 14: '5m' }), 1024)).toEqual({
      inputTokens: 500,
      cacheReadTokens: 0,
      cacheWrite5mTokens: 1500,
      cacheWrite1hTokens: 0,
      totalTokens: 2000,
    })
    expect(cache.use('m', blocks(20, 100, { 14: '5m' }), 1024)).toMatchObject({
      inputTokens: 500,
      cacheReadTokens: 1500,
      cacheWrite5mTokens: 0,
    })
  })

  it('finds an earlier write within 20 blocks of a later breakpoint, and misses beyond that', () => {
    const cache = new AnthropicPromptCache(() => 0)
    cache.use('m', blocks(40, 100, { 15: '5m' }), 1024)
    expect(cache.use('m', blocks(40, 100, { 34: '5m' }), 1024)).toMatchObject({
      cacheReadTokens: 1600,
      cacheWrite5mTokens: 1900,
    })
    const cold = new AnthropicPromptCache(() => 0)
    cold.use('m', blocks(40, 100, { 15: '5m' }), 1024)
    expect(cold.use('m', blocks(40, 100, { 35: '5m' }), 1024)).toMatchObject({
      cacheReadTokens: 0,
      cacheWrite5mTokens: 3600,
    })
  })

  it('does not cache a prefix shorter than the minimum', () => {
    const cache = new AnthropicPromptCache(() => 0)
    cache.use('m', blocks(5, 100, { 4: '5m' }), 1024)
    expect(cache.use('m', blocks(5, 100, { 4: '5m' }), 1024)).toMatchObject({
      cacheReadTokens: 0,
      cacheWrite5mTokens: 0,
      inputTokens: 500,
    })
  })

  it('expires 5-minute entries, refreshes them on read, and splits writes by TTL', () => {
    let now = 0
    const cache = new AnthropicPromptCache(() => now)
    expect(cache.use('m', blocks(30, 100, { 11: '1h', 24: '5m' }), 1024)).toMatchObject({
      cacheWrite1hTokens: 1200,
      cacheWrite5mTokens: 1300,
    })
    now = 4 * 60_000
    expect(cache.use('m', blocks(30, 100, { 11: '1h', 24: '5m' }), 1024)).toMatchObject({ cacheReadTokens: 2500 })
    now = 8 * 60_000
    expect(cache.use('m', blocks(30, 100, { 11: '1h', 24: '5m' }), 1024)).toMatchObject({ cacheReadTokens: 2500 })
    now = 20 * 60_000
    expect(cache.use('m', blocks(30, 100, { 11: '1h', 24: '5m' }), 1024)).toMatchObject({
      cacheReadTokens: 1200,
      cacheWrite5mTokens: 1300,
    })
  })

  it('keeps an entry for a marker inside the prefix it read, billing nothing for it, so a later edit after it reads up to it', () => {
    const cache = new AnthropicPromptCache(() => 0)
    cache.use('m', blocks(30, 100, { 29: '5m' }), 1024)
    // Block 12 is marked only now, inside what this request reads: no write is billed.
    expect(cache.use('m', blocks(30, 100, { 12: '5m', 29: '5m' }), 1024)).toMatchObject({
      cacheReadTokens: 3000,
      cacheWrite5mTokens: 0,
    })
    const edited = blocks(30, 100, { 12: '5m', 29: '5m' }).map((block, index) =>
      index === 13 ? { ...block, key: 'cleared' } : block,
    )
    expect(cache.use('m', edited, 1024)).toMatchObject({ cacheReadTokens: 1300, cacheWrite5mTokens: 1700 })
  })

  it('keeps no entry for a marker inside a read prefix shorter than the minimum cacheable length', () => {
    const cache = new AnthropicPromptCache(() => 0)
    cache.use('m', blocks(30, 100, { 29: '5m' }), 1024)
    cache.use('m', blocks(30, 100, { 5: '5m', 29: '5m' }), 1024)
    const edited = blocks(30, 100, { 5: '5m', 29: '5m' }).map((block, index) =>
      index === 6 ? { ...block, key: 'cleared' } : block,
    )
    expect(cache.use('m', edited, 1024)).toMatchObject({ cacheReadTokens: 0 })
  })

  it('keys entries by scope (model) and by every earlier block', () => {
    const cache = new AnthropicPromptCache(() => 0)
    cache.use('m', blocks(20, 100, { 19: '5m' }), 1024)
    expect(cache.use('other-model', blocks(20, 100, { 19: '5m' }), 1024).cacheReadTokens).toBe(0)
    const edited = blocks(20, 100, { 19: '5m' })
    edited[3] = { key: 'changed', tokens: 100 }
    expect(cache.use('m', edited, 1024).cacheReadTokens).toBe(0)
  })
})

describe('OpenAIPromptCache', () => {
  it('caches prompts of 1024+ tokens in 128-token steps at message boundaries', () => {
    const cache = new OpenAIPromptCache()
    expect(cache.use('k', ['a', 'b'], [1000, 300], 1300)).toBe(0)
    expect(cache.use('k', ['a', 'b', 'c'], [1000, 300, 50], 1350)).toBe(1280)
    expect(cache.use('k', ['a', 'x'], [1000, 300], 1300)).toBe(0)
  })
})
