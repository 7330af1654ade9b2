import type { Config } from './schema.ts'

/**
 * Model entries whose absolute budget is at or above their window: ctxgate then keeps prompts only
 * under window − max_tokens, with no headroom for its own estimate's error. Typical cause: an
 * entry that sets `window` alone and inherits an absolute default budget meant for a larger one.
 */
export function budgetWarnings(config: Readonly<Config>): string[] {
  return config.models
    .filter((entry) => entry.budget > 1 && entry.budget >= entry.window)
    .map(
      (entry) =>
        `models entry "${entry.match}": budget ${entry.budget.toLocaleString('en-US')} is not below its window ${entry.window.toLocaleString('en-US')}, so prompts are cut only at the window; give it a budget (e.g. budget: 0.9 for 90% of the window)`,
    )
}
