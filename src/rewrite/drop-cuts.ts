import type { MessageView } from './types.ts'

/**
 * Where the planner may drop whole messages (docs/rewriting.md, rule 4): after the first message, up
 * to the start of a user turn (`turns`), or of a tool round inside one long turn, a sub-agent's
 * (`rounds`), at a message no later call's result depends on.
 */
export function cutStarts(
  messages: readonly MessageView[],
  from: number,
  isCut: (index: number) => boolean,
  scope: 'turns' | 'rounds',
): number[] {
  const starts = (index: number): boolean =>
    scope === 'turns'
      ? messages[index]?.startsUserTurn === true
      : messages[index]?.role === 'assistant' && messages[index - 1]?.role !== 'assistant'
  const cuts: number[] = []
  // Cuts are turn or round starts, so even the last one keeps the newest turn or round whole.
  for (let index = from + 1; index < messages.length; index++) if (isCut(index) && starts(index)) cuts.push(index)
  return cuts
}

/** What a drop's size is reckoned from: the request without its current drop note, and that note's size at a cut. */
export interface DropSizes {
  readonly from: number
  readonly totalWithoutNote: number
  readonly messageTokens: readonly number[]
  readonly noteTokens: (cut: number) => number
  readonly factor: number
  readonly target: number
}

/** The first cut that brings the request within the target, else the last one; undefined when there is none. */
export function bestCut(cuts: readonly number[], sizes: DropSizes): number | undefined {
  // Cuts come in ascending order: the tokens removed grow with each, summed once (not per cut).
  let removed = 0
  let summedTo = sizes.from
  for (const cut of cuts) {
    if (cut < summedTo) continue
    for (; summedTo < cut; summedTo++) removed += sizes.messageTokens[summedTo] as number
    if ((sizes.totalWithoutNote - removed + sizes.noteTokens(cut)) * sizes.factor <= sizes.target) return cut
  }
  return cuts[cuts.length - 1]
}
