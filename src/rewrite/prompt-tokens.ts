/**
 * Totals of message lists' tokens their builder already summed (providers/anthropic/message-views.ts
 * carries a growing conversation's sums from its previous request): the same integer the walk below
 * adds up, found without reading every message again.
 */
const knownTotals = new WeakMap<readonly { readonly tokens: number }[], number>()

/** Notes the sum of `messages`' tokens; the list must not change after. */
export function noteMessagesTokens(messages: readonly { readonly tokens: number }[], total: number): void {
  knownTotals.set(messages, total)
}

/** The sum of the messages' tokens. */
export function messagesTokens(messages: readonly { readonly tokens: number }[]): number {
  return knownTotals.get(messages) ?? messages.reduce((sum, message) => sum + message.tokens, 0)
}

/** A prompt's estimated tokens as the client sent it: the head plus every message, before any factor. */
export function promptTokens(prompt: {
  readonly headTokens: number
  readonly messages: readonly { readonly tokens: number }[]
}): number {
  // Token counts are integers (every estimate is rounded up), so the sum is exact in any order.
  return prompt.headTokens + messagesTokens(prompt.messages)
}
