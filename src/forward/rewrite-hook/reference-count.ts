import type { ChatAdapter } from '../../providers/adapter-contract.ts'
import { promptTokens } from '../../rewrite/prompt-tokens.ts'
import type { ReadChat } from './hook-request.ts'

/**
 * The reference vocabulary's count of the unedited prompt, which the calibration sizes new content
 * by (docs/estimates.md): the estimate itself where it is an exact count, undefined until the
 * vocabulary is loaded. Memoised per string and per re-sent message, so a request pays for what is new.
 */
export function referenceTokens(chat: ReadChat, adapter: ChatAdapter, estimate: number): number | undefined {
  if (chat.estimator.exact) return estimate
  const reference = chat.estimator.reference()
  if (reference === undefined) return undefined
  return promptTokens(adapter.view(chat.json, reference))
}
