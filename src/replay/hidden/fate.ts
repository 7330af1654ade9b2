/**
 * What became of the tool output a hidden string came from, in the request as sent: cleared to a
 * note, folded to a summary, gone with a dropped turn or round, or still whole (then something
 * else removed the string, such as a recorded compaction).
 */
import { allText, resultText } from './message-strings.ts'
import type { Block } from '../conversation.ts'

export type SourceFate = 'cleared' | 'folded' | 'dropped' | 'whole'

/** Every tool result of a request body by its call id, as text. */
export function sentResults(sentBody: unknown): Map<string, string> {
  return sentBlocksById(sentBody, (block) =>
    block?.type === 'tool_result' ? [block.tool_use_id, resultText(block)] : undefined,
  )
}

/** Every tool call's input of a request body by its call id, as text. */
export function sentInputs(sentBody: unknown): Map<string, string> {
  return sentBlocksById(sentBody, (block) =>
    block?.type === 'tool_use' && typeof block.id === 'string' ? [block.id, allText(block.input)] : undefined,
  )
}

/** The blocks of a request body's messages that `entry` keys, by that key. */
function sentBlocksById(
  sentBody: unknown,
  entry: (block: Block) => readonly [string, string] | undefined,
): Map<string, string> {
  const byId = new Map<string, string>()
  const messages = (sentBody as { messages?: unknown } | null)?.messages
  if (!Array.isArray(messages)) return byId
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content
    if (!Array.isArray(content)) continue
    for (const block of content as Block[]) {
      const found = entry(block)
      if (found) byId.set(found[0], found[1])
    }
  }
  return byId
}

export function fateOf(results: ReadonlyMap<string, string>, sourceId: string): SourceFate {
  const text = results.get(sourceId)
  if (text === undefined) return 'dropped'
  // Every text ctxgate puts in a result's place starts with "[ctxgate" (src/rewrite/notes.ts).
  if (text.startsWith('[ctxgate folded')) return 'folded'
  if (text.startsWith('[ctxgate')) return 'cleared'
  return 'whole'
}
