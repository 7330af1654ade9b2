import type { ConversationRequest } from '../../calibration/calibration.ts'
import type { ChatAdapter } from '../../providers/adapter-contract.ts'
import { promptTokens } from '../../rewrite/prompt-tokens.ts'
import type { ReadChat } from './hook-request.ts'

/** The reference vocabulary's count of a prompt, made when first asked for and kept; see `referenceCount`. */
export type ReferenceCount = () => number

/**
 * The reference vocabulary's count of the unedited prompt, which the calibration sizes new content
 * by (docs/estimates.md): the estimate itself where it is an exact count, undefined until the
 * vocabulary is loaded. Counted when first asked for: a request sent before it is planned is sized
 * only after dispatch, and 2 KB of new text costs the vocabulary about 0.035 ms (docs/estimates.md). Whether there is a count is settled here, as the request is read: the vocabulary
 * loading meanwhile does not change it. Memoised per string and per re-sent message, so a request
 * pays for what is new.
 */
export function referenceCount(chat: ReadChat, adapter: ChatAdapter, estimate: number): ReferenceCount | undefined {
  if (chat.estimator.exact) return () => estimate
  const reference = chat.estimator.reference()
  if (reference === undefined) return undefined
  let counted: number | undefined
  return () => (counted ??= promptTokens(adapter.view(chat.json, reference)))
}

/** The request as the calibration sizes it, its reference count read only when the calibration reads it. */
export function conversationRequest(
  key: string,
  unedited: number,
  reference: ReferenceCount | undefined,
): ConversationRequest {
  if (reference === undefined) return { key, unedited }
  return {
    key,
    unedited,
    get reference() {
      return reference()
    },
  }
}
