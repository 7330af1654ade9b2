import type { Edit } from '../../rewrite/types.ts'
import type { Json } from '../../util/json.ts'

/**
 * Puts the system note into an OpenAI list (Chat `messages` after the head, Responses `input` after
 * the head) right after the run of tool results that holds the earliest edit. Everything before
 * that edit stays byte-identical, so the first edited request still reads it from the prompt cache,
 * where a note at the head would make it miss whole. The run is never split: Chat wants every
 * result of a round right after its call, and the note never comes between a reasoning item and
 * the call it belongs to. The place depends only on what the earliest edit is and what precedes
 * it, so it stays put as the conversation grows.
 */
export function withNoteAtEditPoint(input: {
  /** The list after the head, edits applied. */
  readonly rewritten: readonly Json[]
  /** Earliest edited entry in the client's list after the head; -1 when none (then no note). */
  readonly firstEdited: number
  readonly edits: readonly Edit[]
  readonly note: Json
  readonly isToolResult: (entry: Json) => boolean
  /** A call item of its own (Responses): an edited call's input is followed by the rest of its round before the note. */
  readonly isToolCall?: (entry: Json) => boolean
}): Json[] {
  const { rewritten, firstEdited, isToolCall } = input
  if (firstEdited < 0 || rewritten.length === 0) return [...rewritten]
  let anchor = Math.min(rewrittenIndex(firstEdited, input.edits), rewritten.length - 1)
  if (isToolCall?.(rewritten[anchor] as Json) === true)
    while (anchor + 1 < rewritten.length && isToolCall(rewritten[anchor + 1] as Json)) anchor++
  while (anchor + 1 < rewritten.length && input.isToolResult(rewritten[anchor + 1] as Json)) anchor++
  return [...rewritten.slice(0, anchor + 1), input.note, ...rewritten.slice(anchor + 1)]
}

/** Where an entry of the client's list sits once a drop took messages [from, to) out (the first one stays, with the drop's note). */
function rewrittenIndex(clientIndex: number, edits: readonly Edit[]): number {
  const drop = edits.find((edit): edit is Extract<Edit, { kind: 'drop-messages' }> => edit.kind === 'drop-messages')
  if (!drop) return clientIndex
  return clientIndex < drop.to ? 0 : clientIndex - (drop.to - 1)
}

/** The list already carries the note (a client that sends back what it was sent): it is not added twice. */
export function carriesNote(entries: readonly Json[], note: string): boolean {
  return entries.some((entry) => {
    const content = entry['content']
    if (content === note) return true
    return Array.isArray(content) && content.some((part) => (part as Json | null)?.['text'] === note)
  })
}
