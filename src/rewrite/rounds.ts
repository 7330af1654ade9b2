import type { MessageView } from './types.ts'

/** The tool rounds of a conversation, as every part of the rewrite counts them. */
export interface Rounds {
  readonly count: number
  /** Each call id: its tool's name and the round it belongs to (0 = oldest). */
  readonly callOf: ReadonlyMap<string, { readonly tool: string; readonly round: number }>
  /** Index of the newest round started at or before each message (-1: none yet). */
  readonly roundAt: readonly number[]
}

/**
 * A round is an assistant turn's tool calls: consecutive calling messages are one round, since the
 * Responses API lists each parallel call as its own item while Messages and Chat put them in one.
 */
export function roundsOf(messages: readonly MessageView[]): Rounds {
  const callOf = new Map<string, { tool: string; round: number }>()
  const roundAt: number[] = []
  const walk: RoundWalk = { count: 0, called: false }
  for (const message of messages) {
    stepRound(walk, message)
    message.toolCallIds.forEach((id, position) =>
      callOf.set(id, { tool: message.toolCallNames?.[position] ?? '', round: walk.count - 1 }),
    )
    roundAt.push(walk.count - 1)
  }
  return { count: walk.count, callOf, roundAt }
}

/** Where a walk over the messages stands: rounds started so far, and whether the last message that counts called tools. */
export interface RoundWalk {
  count: number
  called: boolean
}

/** Moves the walk past one message: a calling message after a non-calling one starts a round; a user or tool message ends one. */
export function stepRound(walk: RoundWalk, message: MessageView): void {
  if (message.toolCallIds.length === 0) {
    if (message.role !== 'assistant') walk.called = false
    return
  }
  if (!walk.called) walk.count++
  walk.called = true
}

/** Rounds newer than the one a call belongs to (the newest round has 0). */
export function roundsNewerThan(rounds: Rounds, callId: string, fallbackMessage: number): number {
  const round = rounds.callOf.get(callId)?.round ?? rounds.roundAt[fallbackMessage] ?? 0
  return rounds.count - 1 - round
}
