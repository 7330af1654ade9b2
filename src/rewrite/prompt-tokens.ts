/** A prompt's estimated tokens as the client sent it: the head plus every message, before any factor. */
export function promptTokens(prompt: {
  readonly headTokens: number
  readonly messages: readonly { readonly tokens: number }[]
}): number {
  return prompt.messages.reduce((sum, message) => sum + message.tokens, prompt.headTokens)
}
