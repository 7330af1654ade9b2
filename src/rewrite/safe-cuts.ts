import type { MessageView } from './types.ts'

/**
 * For each message index, the earliest call any result at or after it answers: a cut at an index
 * is safe only when that call is not before it, so no kept result loses its call.
 */
export function earliestCallsNeeded(
  messages: readonly MessageView[],
  callMessage: ReadonlyMap<string, number>,
): readonly number[] {
  const needed = Array.from({ length: messages.length + 1 }, () => Number.POSITIVE_INFINITY)
  for (let index = messages.length - 1; index >= 0; index--) {
    let earliest = needed[index + 1] as number
    for (const result of messages[index]?.toolResults ?? [])
      earliest = Math.min(earliest, callMessage.get(result.id) ?? index - 1)
    needed[index] = earliest
  }
  return needed
}
