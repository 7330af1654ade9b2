/**
 * Which tool results the agent is working from: for each result, the newest later message whose
 * tool inputs quote one of its lines (an Edit's old_string, a Write's content, a patch). Replay
 * shows those are the results it quotes again next (docs/quality.md, "Clearing ordered by risk"),
 * so when edits are forced they go last, the least recently quoted first.
 */
import { clearRanks, maxRank } from './clear-order.ts'
import { inputStrings } from './distinctive.ts'
import { inUseSince } from './in-use.ts'
import { parsedInput } from './tool-kind.ts'
import type { MessageView } from './types.ts'

/** Shorter lines (a brace, `return x`) turn up in every file and say nothing about which one was read. */
export const minQuotedLine = 20

/** Result id → index of the newest message quoting one of its lines; results never quoted are absent. */
export function lastQuoted(messages: readonly MessageView[]): Map<string, number> {
  const quoted = new Map<string, number>()
  const resultsByLine = new Map<string, string[]>()
  messages.forEach((message, index) => {
    for (const input of message.toolCallInputs ?? [])
      for (const line of linesOf(inputStrings(parsedInput(input))))
        for (const id of resultsByLine.get(line) ?? []) quoted.set(id, index)
    for (const result of message.toolResults)
      for (const line of new Set(linesOf([result.text]))) {
        const ids = resultsByLine.get(line)
        if (ids) ids.push(result.id)
        else resultsByLine.set(line, [result.id])
      }
  })
  return quoted
}

/** The lines of these texts an agent could quote: 20 characters or more, line numbers and patch marks left out. */
export function linesOf(texts: readonly string[]): string[] {
  const lines: string[] = []
  for (const text of texts)
    for (const raw of text.split('\n')) {
      // A read shows line numbers (`  12→`, `12\t`) and a patch marks lines with +/-: neither is part of the line quoted.
      const line = raw
        .replace(/^\s*\d+(?:→|\t)/, '')
        .replace(/^[+-](?![+-])/, '')
        .trim()
      if (line.length >= minQuotedLine) lines.push(line)
    }
  return lines
}

/** Results the agent has quoted since it fetched them go after every clearing class. */
export const inUseRank = maxRank + 1

/**
 * The order clearing takes when edits are forced: the classes of clear-order.ts, then the results
 * in use (quoted since, or restored on use); oldest first within a class, the least recently quoted
 * first among those in use.
 */
export function forcedOrder(
  messages: readonly MessageView[],
  /** Results also in use: those restored on use (restore.ts). */
  alsoInUse: ReadonlySet<string> = new Set(),
): {
  readonly rankOf: (result: { readonly id: string }) => number
  readonly inOrder: <T extends { readonly id: string }>(results: readonly T[]) => T[]
} {
  const ranks = clearRanks(messages)
  const quoted = lastQuoted(messages)
  // Results whose distinctive strings the newest messages quote are in use too (in-use.ts).
  for (const [id, index] of inUseSince(messages)) if ((quoted.get(id) ?? -1) < index) quoted.set(id, index)
  const rankOf = (result: { readonly id: string }): number =>
    quoted.has(result.id) || alsoInUse.has(result.id) ? inUseRank : (ranks.get(result.id) ?? 1)
  const inOrder = <T extends { readonly id: string }>(results: readonly T[]): T[] =>
    results
      .map((result, order) => ({ result, order, rank: rankOf(result), quoted: quoted.get(result.id) ?? 0 }))
      .toSorted((a, b) => a.rank - b.rank || a.quoted - b.quoted || a.order - b.order)
      .map((entry) => entry.result)
  return { rankOf, inOrder }
}
