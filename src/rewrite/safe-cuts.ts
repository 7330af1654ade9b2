import type { MessageView } from './types.ts'

/**
 * For each message index, the earliest call any result at or after it answers: a cut at an index
 * is safe only when that call is not before it, so no kept result loses its call.
 */
export function earliestCallsNeeded(
  messages: readonly MessageView[],
  callMessage: ReadonlyMap<string, number>,
): readonly number[] {
  return earliestFromOwnNeeds(messages.map((message, index) => ownCallNeeded(message, index, callMessage)))
}

/** The earliest call one message's results answer (the message before it for a result with no call). */
export function ownCallNeeded(message: MessageView, index: number, callMessage: ReadonlyMap<string, number>): number {
  let earliest = Number.POSITIVE_INFINITY
  for (const result of message.toolResults) earliest = Math.min(earliest, callMessage.get(result.id) ?? index - 1)
  return earliest
}

/** earliestCallsNeeded from each message's own need: the minimum of it and every later one's, and one more entry for the end. */
export function earliestFromOwnNeeds(own: readonly number[]): number[] {
  const needed = own.slice()
  let earliest = Number.POSITIVE_INFINITY
  needed.push(earliest)
  for (let index = own.length - 1; index >= 0; index--) {
    earliest = Math.min(earliest, own[index] as number)
    needed[index] = earliest
  }
  return needed
}
