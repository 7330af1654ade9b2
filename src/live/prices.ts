import type { Usage } from '../model-call/usage.ts'

/** Dollars per million tokens for one model family. Cache writes cost 1.25× (5 minutes) or 2× (1 hour) input. */
export interface ModelPrice {
  readonly family: string
  readonly input: number
  readonly cacheRead: number
  readonly output: number
}

/**
 * List prices per family, first match wins. Anthropic: Opus 4.5/4.6, Sonnet 4.x and Haiku 4.5 rates
 * (reads are 0.1× input). OpenAI: GPT-5, GPT-4.1 and GPT-4o rates with their cached-input prices.
 * A stand-in until prices are configurable.
 */
const priceTable: readonly [RegExp, ModelPrice][] = [
  [/opus/i, { family: 'opus', input: 5, cacheRead: 0.5, output: 25 }],
  [/sonnet/i, { family: 'sonnet', input: 3, cacheRead: 0.3, output: 15 }],
  [/haiku/i, { family: 'haiku', input: 1, cacheRead: 0.1, output: 5 }],
  [/^gpt-5(\.\d+)?-mini/i, { family: 'gpt-5-mini', input: 0.25, cacheRead: 0.025, output: 2 }],
  [/^gpt-5(\.\d+)?-nano/i, { family: 'gpt-5-nano', input: 0.05, cacheRead: 0.005, output: 0.4 }],
  [/^gpt-5/i, { family: 'gpt-5', input: 1.25, cacheRead: 0.125, output: 10 }],
  [/^gpt-4\.1-mini/i, { family: 'gpt-4.1-mini', input: 0.4, cacheRead: 0.1, output: 1.6 }],
  [/^gpt-4\.1/i, { family: 'gpt-4.1', input: 2, cacheRead: 0.5, output: 8 }],
  [/^gpt-4o-mini/i, { family: 'gpt-4o-mini', input: 0.15, cacheRead: 0.075, output: 0.6 }],
  [/^gpt-4o/i, { family: 'gpt-4o', input: 2.5, cacheRead: 1.25, output: 10 }],
]

/** What this model's family costs, or undefined when ctxgate has no price for it. */
export function priceFor(model: string): ModelPrice | undefined {
  return priceTable.find(([pattern]) => pattern.test(model))?.[1]
}

/** Dollars for one answer's usage at list price; `inputScale` stretches the prompt side (an unedited estimate). */
export function dollarsFor(price: ModelPrice, usage: Usage, inputScale = 1): number {
  const prompt =
    usage.inputTokens * price.input +
    usage.cacheWrite5mTokens * price.input * 1.25 +
    usage.cacheWrite1hTokens * price.input * 2 +
    usage.cacheReadTokens * price.cacheRead
  return (prompt * inputScale + usage.outputTokens * price.output) / 1_000_000
}
