import { hashText } from './hash.ts'
import type { ChatView, RewriteReport } from './types.ts'

/** Why this request's prefix fails to extend the previous one of its conversation. */
export type PrefixBreak = 'client_edit' | 'ctxgate_batch'

/** What the previous request left behind for the check: how many messages it had, their signature, the note. */
export interface PreviousPrefix {
  readonly messageCount?: number
  readonly prefixSignature?: string
  readonly noteOn?: boolean
}

export interface PrefixBreakInput {
  readonly previous: PreviousPrefix | undefined
  readonly view: ChatView
  readonly report: RewriteReport
  readonly noteOn: boolean
}

/**
 * The client rewrote its history (fewer messages, different ones, a result ctxgate had frozen), or
 * ctxgate started a new batch of edits inside what was sent before; undefined when the prefix held.
 */
export function detectPrefixBreak({ previous, view, report, noteOn }: PrefixBreakInput): PrefixBreak | undefined {
  if (!previous || previous.messageCount === undefined) return undefined
  if (
    report.clientEdited ||
    view.messages.length < previous.messageCount ||
    prefixSignature(view, previous.messageCount) !== previous.prefixSignature
  )
    return 'client_edit'
  if ((report.firstNewEdit >= 0 && report.firstNewEdit < previous.messageCount) || (noteOn && previous.noteOn !== true))
    return 'ctxgate_batch'
  return undefined
}

/** Role and estimated size of each of the first `count` messages: cheap, and changes when their content does. */
export function prefixSignature(view: ChatView, count: number): string {
  let text = ''
  for (let index = 0; index < count; index++) {
    const message = view.messages[index]
    text += `${message?.role}:${message?.tokens};`
  }
  return hashText(text)
}
