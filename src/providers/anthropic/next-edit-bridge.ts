import { withinLookback } from './breakpoint-rules.ts'

/** A block a marker could go on just ahead of a tool result: where a batch starting at that result would edit. */
export interface ResultMark {
  readonly id: string
  readonly position: number
  readonly message: number
}

/**
 * On a batch request with one free slot for the two next-edit markers (Claude Code marks two system
 * blocks and its newest block), reading the entry the batch relies on and writing the one the next
 * batch will read cannot both have a marker. One marker within the lookback of the entry read does
 * both: it reads that entry by walking back, and writes its own, as far towards the following edit
 * as the lookback lets it go. Under the strict cache-write reading this is the only entry the next
 * batch can find (docs/economy.md, "The marker as a promise"). Undefined when no result lies there.
 */
export function bridgeMark(
  marks: readonly ResultMark[],
  read: { readonly position: number },
  following: { readonly position: number },
): ResultMark | undefined {
  let bridge: ResultMark | undefined
  // Marks come in the cache's order: past the following edit or out of the lookback, so are all the rest.
  for (const mark of marks) {
    if (mark.position <= read.position) continue
    if (mark.position > following.position || !withinLookback(read.position, mark.position)) break
    if (mark.position > (bridge?.position ?? -1)) bridge = mark
  }
  return bridge
}

interface Mark {
  readonly position: number
  readonly message: number
}

/**
 * Where the one marker goes. A bridge reads the batch's entry but leaves the next batch rewriting
 * from it to the following edit; when that stretch outweighs what lies between the head and the
 * entry, the marker goes at the following edit itself and this batch writes that part again from
 * the head instead (which the client's own head markers still read).
 */
export function oneMarker(
  bridge: ResultMark | undefined,
  read: Mark,
  following: Mark,
  tokens: (fromMessage: number, toMessage: number) => number,
): { readonly at: Mark; readonly promisedResult?: string } {
  if (bridge === undefined) return { at: following }
  const lagging = tokens(bridge.message, following.message)
  const givenUp = tokens(0, read.message + 1)
  return lagging > givenUp ? { at: following } : { at: bridge, promisedResult: bridge.id }
}
