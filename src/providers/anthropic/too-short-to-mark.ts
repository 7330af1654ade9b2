import type { ApplyOptions } from '../adapter-contract.ts'
import type { ChatView } from '../../rewrite/types.ts'

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
