import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { limitsFor, onUnknownModel } from '../../src/config/model-limits.ts'

describe('limitsFor', () => {
  it('reports every lookup that only the catch-all entry served, and none for known models', () => {
    const config = loadConfig()
    const misses: string[] = []
    onUnknownModel(config, (model) => misses.push(model))
    expect(limitsFor(config, 'llama-4-maverick')?.match).toBe('*')
    expect(limitsFor(config, 'llama-4-maverick')?.match).toBe('*')
    expect(limitsFor(config, 'claude-sonnet-4-5')?.match).toBe('claude-*')
    expect(limitsFor(config, 'gpt-4o-2024-08-06')?.match).toBe('gpt-4o*')
    expect(misses).toEqual(['llama-4-maverick', 'llama-4-maverick'])
  })

  it('reports a model nothing matches when there is no catch-all', () => {
    const config = loadConfig({
      overrides: {
        models: [
          { match: 'claude-*', window: 200_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false },
        ],
      },
    })
    const misses: string[] = []
    onUnknownModel(config, (model) => misses.push(model))
    expect(limitsFor(config, 'gpt-4o')).toBeUndefined()
    expect(misses).toEqual(['gpt-4o'])
  })
})
