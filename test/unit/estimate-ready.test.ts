import { describe, expect, it } from 'vitest'
import { TokenEstimator, type ExactCounters } from '../../src/rewrite/estimate.ts'

/** Exact counters whose vocabulary loads when the test says so. */
function loadingCounters(): { counters: ExactCounters; load: () => void } {
  let load = (): void => undefined
  const loaded = new Promise<void>((resolve) => (load = resolve))
  return { counters: { counterFor: () => undefined, ready: () => loaded }, load: () => load() }
}

describe('waiting for a model’s vocabulary', () => {
  it('never lets a request skip the wait before the vocabulary has loaded', async () => {
    const { counters, load } = loadingCounters()
    const estimator = new TokenEstimator(counters)
    const waiting = estimator.ready('gpt-4o')
    expect(estimator.isReady('gpt-4o')).toBe(false)
    load()
    await waiting
    expect(estimator.isReady('gpt-4o')).toBe(true)
    expect(estimator.isReady('gpt-4.1')).toBe(false)
  })

  it('keeps a bounded set of model names, whatever names clients send', async () => {
    const estimator = new TokenEstimator()
    for (let index = 0; index < 1_000; index++) await estimator.ready(`model-${index}`)
    const remembered = Array.from({ length: 1_000 }, (_, index) => estimator.isReady(`model-${index}`))
    expect(remembered.filter(Boolean).length).toBeLessThanOrEqual(256)
    expect(estimator.isReady('model-999')).toBe(true)
  })
})
