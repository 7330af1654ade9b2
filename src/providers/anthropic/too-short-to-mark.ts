import type { Applied, ApplyOptions } from '../adapter-contract.ts'
import type { ChatView } from '../../rewrite/types.ts'
import type { Json } from '../../util/json.ts'

/**
 * A request written as the client sent it (no edit, no note), with no marker asked ahead of a batch,
 * whose whole prompt is shorter than the model's minimum cacheable length: every breakpoint
 * candidate's prefix is shorter still, so placing breakpoints would choose none and change nothing.
 * Read off the view of the same body (its head and message sizes are the ones placement measures).
 */
export function tooShortToMark(view: ChatView, options: ApplyOptions): boolean {
  if (options.edits.length > 0 || options.systemNote !== undefined) return false
  if ((options.followingEditResult ?? options.nextEditResult) !== undefined) return false
  let tokens = view.headTokens
  for (const message of view.messages) tokens += message.tokens
  return tokens < options.minCacheableTokens
}

/** What `apply` returns for a request too short to mark (`ChatAdapter.asSent`): the body as sent, nothing placed. */
export function writtenAsSent(
  body: Json,
  view: ChatView,
  options: Omit<ApplyOptions, 'stableTtl'>,
): Applied | undefined {
  // No edit starts a thinking block's binding, and nothing to mark: `apply` would change nothing.
  if (options.firstEditedMessage >= 0 || !tooShortToMark(view, options)) return undefined
  return { body, headers: {}, tail: view.messages.length - 1, changed: false, breakpoints: 0 }
}
