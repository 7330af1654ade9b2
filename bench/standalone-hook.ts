/** The rewrite hook on its own, as the benches call it: Anthropic Messages, one window, memory store, logs off. */
import { loadConfig } from '../src/config/load-config.ts'
import type { Config } from '../src/config/schema.ts'
import { createLogger } from '../src/log/logger.ts'
import type { PrepareBody } from '../src/request/prepared.ts'
import { Calibration } from '../src/calibration/calibration.ts'
import { TokenEstimator } from '../src/rewrite/estimate.ts'
import { createRewriteHook } from '../src/forward/rewrite-hook/hook.ts'
import { MemorySessionStore } from '../src/session/memory-store.ts'
import { exactCounters } from '../src/providers/registry.ts'
import { loadExactCounter, referenceEncoding } from '../src/providers/openai/tokenizer/exact-counters.ts'

/** Loads the reference vocabulary (docs/estimates.md) so a hook made with `reference` counts every request by it. */
export function loadReference(): Promise<void> {
  return loadExactCounter(referenceEncoding)
}

/** With `reference`, the estimator also counts each prompt by the reference vocabulary once it is loaded, as ctxgate does. */
export function anthropicHook(
  window: number,
  rewrite: Partial<Config['rewrite']> = {},
  options: { readonly reference?: boolean } = {},
): PrepareBody {
  const config = loadConfig({
    overrides: {
      rewrite,
      models: [{ match: '*', window, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
    },
  })
  const hook = createRewriteHook({
    config,
    store: new MemorySessionStore(config.sessions),
    calibration: new Calibration(),
    estimator: options.reference ? new TokenEstimator(exactCounters) : new TokenEstimator(),
    logger: createLogger('silent'),
  })('anthropic-messages')
  if (!hook) throw new Error('no rewrite hook for anthropic-messages')
  return hook
}
