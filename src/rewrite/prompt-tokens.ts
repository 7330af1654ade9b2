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

/** The first message from which the rest of the conversation is at most `tokens` (its length when none is). */
export function tailWithin(
  view: { readonly messages: readonly { readonly tokens: number }[] },
  tokens: number,
): number {
  // Most requests are this short: the carried total answers without reading every message (tokens are never negative).
  if (messagesTokens(view.messages) <= tokens) return 0
  let tail = 0
  for (let index = view.messages.length - 1; index >= 0; index--) {
    tail += view.messages[index]?.tokens ?? 0
    if (tail > tokens) return index + 1
  }
  return 0
}
