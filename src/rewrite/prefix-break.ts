import { TextHasher } from './hash.ts'
import type { ChatView, RewriteReport } from './types.ts'

/**
 * Why this request's cached prefix will not be read whole: the client rewrote its history, the
 * model changed (caches are per model), ctxgate made a new batch of edits, or the previous
 * request's entry has expired (its TTL ran out between the two).
 */
export type PrefixBreak = 'client_edit' | 'model_changed' | 'ctxgate_batch' | 'ttl_expired'

/** What the previous request left behind for the check: how many messages it had, their signature, the note. */
export interface PreviousPrefix {
  readonly messageCount?: number
  readonly prefixSignature?: string
  readonly noteOn?: boolean
  readonly model?: string
}

export interface PrefixBreakInput {
  readonly previous: PreviousPrefix | undefined
  readonly view: ChatView
  readonly report: RewriteReport
  readonly noteOn: boolean
  /** The previous request's cache entry has expired (the gap exceeded its TTL). */
  readonly expired?: boolean
  /** prefixSignature(view, previous.messageCount), when the caller has it already (prefixSignatures). */
  readonly signatureAtPrevious?: string
}

/**
 * The client rewrote its history (fewer messages, different ones, a result ctxgate had frozen), or
 * ctxgate started a new batch of edits inside what was sent before; undefined when the prefix held.
 */
export function detectPrefixBreak(input: PrefixBreakInput): PrefixBreak | undefined {
  const { previous, view, report, noteOn } = input
  if (!previous || previous.messageCount === undefined) return undefined
  if (
    report.clientEdited ||
    view.messages.length < previous.messageCount ||
    (input.signatureAtPrevious ?? prefixSignature(view, previous.messageCount)) !== previous.prefixSignature
  )
    return 'client_edit'
  if (typeof previous.model === 'string' && previous.model !== view.model) return 'model_changed'
  // An expired entry is written again whatever ctxgate does: a batch made then costs nothing extra.
  if (input.expired === true) return 'ttl_expired'
  if ((report.firstNewEdit >= 0 && report.firstNewEdit < previous.messageCount) || (noteOn && previous.noteOn !== true))
    return 'ctxgate_batch'
  return undefined
}

/** Role and estimated size of each of the first `count` messages: cheap, and changes when their content does. */
export function prefixSignature(view: ChatView, count: number): string {
  return prefixSignatures(view, count, count).whole
}

/**
 * The signatures of the first `at` and the first `count` messages (at <= count) in one walk: what the
 * previous request's shape is checked against, and what this request leaves for the next one.
 * `at` is undefined when nothing asks for it.
 */
export function prefixSignatures(
  view: ChatView,
  at: number | undefined,
  count: number,
): { readonly atPrevious: string | undefined; readonly whole: string } {
  const hasher = new TextHasher()
  let atPrevious = at === 0 ? hasher.digest() : undefined
  for (let index = 0; index < count; index++) {
    const message = view.messages[index]
    // The text hashed is `${role}:${tokens};` per message, as it always was.
    hasher.add(`${message?.role}:${message?.tokens};`)
    if (index + 1 === at) atPrevious = hasher.digest()
  }
  return { atPrevious, whole: hasher.digest() }
}
