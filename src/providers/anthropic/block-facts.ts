import { memoOnFrozen } from '../../util/frozen-memo.ts'
import { isJsonObject, type Json } from '../../util/json.ts'
import { blocksOf, markable } from './blocks.ts'

/** What placing breakpoints reads of one message's blocks, by offset within the message. */
export interface BlockFacts {
  readonly count: number
  /** Offset of the last block that may carry a marker; -1 when none may. */
  readonly lastMarkable: number
  /** Markers the client put on blocks (and inside tool results), in block order, at their block's offset. */
  readonly markers: readonly { readonly marked: unknown; readonly offset: number }[]
  /** Tool results in order: their `tool_use_id` and the offset of the last markable block before them here (-1: none). */
  readonly results: readonly { readonly id: unknown; readonly markableBefore: number }[]
}

/** A message's block facts; a re-sent (frozen) message's are read once per process, not once per request. */
export const blockFactsOf: (message: Json) => BlockFacts = memoOnFrozen(readFacts)

function readFacts(message: Json): BlockFacts {
  const blocks = blocksOf(message)
  const markers: { marked: unknown; offset: number }[] = []
  const results: { id: unknown; markableBefore: number }[] = []
  let lastMarkable = -1
  blocks.forEach((block, offset) => {
    if (block['cache_control'] !== undefined) markers.push({ marked: block['cache_control'], offset })
    if (Array.isArray(block['content']))
      for (const inner of block['content'] as unknown[])
        if (isJsonObject(inner) && inner['cache_control'] !== undefined)
          markers.push({ marked: inner['cache_control'], offset })
    if (block['type'] === 'tool_result') results.push({ id: block['tool_use_id'], markableBefore: lastMarkable })
    if (markable(block)) lastMarkable = offset
  })
  return { count: blocks.length, lastMarkable, markers, results }
}
