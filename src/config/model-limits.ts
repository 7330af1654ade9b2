import { memoizeByName } from '../memoize-by-name.ts'
import { globToRegExp } from '../util/glob.ts'
import type { Config, ModelLimits } from './schema.ts'

/**
 * The first configured entry whose glob matches the model name. A name that only the catch-all
 * `*` entry (or nothing) matches is reported to the handler set with `onUnknownModel`, every time.
 */
export function limitsFor(config: Readonly<Config>, model: string): ModelLimits | undefined {
  const limits = lookupLimits(config, model)
  if (limits === undefined || limits.match === catchAll)
    for (const handler of missHandlers.get(config) ?? []) handler(model)
  return limits
}

/** The same lookup without reporting a miss: for readers (the live page) that must not count a request twice. */
export function lookupLimits(config: Readonly<Config>, model: string): ModelLimits | undefined {
  let lookup = lookups.get(config)
  if (!lookup) {
    lookup = memoizeByName((name) => config.models.find((entry) => globToRegExp(entry.match).test(name)))
    lookups.set(config, lookup)
  }
  return lookup(model)
}

/** The pattern of the fallback entry: a model served only by it has no limits of its own. */
export const catchAll = '*'

/** Tells the app about models the configuration does not know (a warning and a metric), without the routes knowing. */
export function onUnknownModel(config: Readonly<Config>, handler: (model: string) => void): void {
  missHandlers.set(config, [...(missHandlers.get(config) ?? []), handler])
}

const lookups = new WeakMap<Readonly<Config>, (model: string) => ModelLimits | undefined>()
const missHandlers = new WeakMap<Readonly<Config>, readonly ((model: string) => void)[]>()

/** Prompt tokens to keep under: the configured budget (fraction or absolute), minus max_tokens, lowered by a header. */
export function promptBudget(limits: ModelLimits, maxOutputTokens: number, headerBudget: number | undefined): number {
  const configured = configuredBudget(limits)
  const fits = Math.min(configured, limits.window - maxOutputTokens)
  return Math.max(0, headerBudget === undefined ? fits : Math.min(fits, headerBudget))
}

/** The configured budget in tokens: a fraction of the window (≤ 1) multiplied out, or the count as set. */
export function configuredBudget(limits: ModelLimits): number {
  return limits.budget <= 1 ? limits.budget * limits.window : limits.budget
}
