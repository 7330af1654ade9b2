/**
 * Builds the economy's description of a request from the rewrite view: sizes as the planner counts
 * them (times the calibration factor), results already frozen counted at their replacement's size
 * and left out of any new batch, each result with its tool name and the round it answers.
 */
import { callsOfView, resultHazards } from '../clear-order.ts'
import type { TokenEstimator } from '../estimate.ts'
import { clearedNoteFor, foldSummary } from '../notes.ts'
import type { ChatView, FrozenDecisions, FrozenResult, MessageView } from '../types.ts'
import type { ConversationCost, MessageCost, ResultCost } from './types.ts'

export interface DescribeInput {
  readonly view: ChatView
  readonly decisions: FrozenDecisions
  /** Calibration: estimates times this are an upper bound on the real count. */
  readonly factor: number
  readonly estimator: TokenEstimator
  /** Tokens the head carries besides the view's (the system note's room). */
  readonly extraHeadTokens: number
  readonly budget: number
  readonly cacheTtl: '5m' | '1h'
  readonly msSinceLastRequest: number | undefined
  /** Results in messages before this one are not edited (the previous request's cache marker). */
  readonly editableFrom?: number
}

export function describeView(input: DescribeInput): ConversationCost {
  const { view, factor, estimator } = input
  const frozen = frozenMap(input.decisions)
  const rounds = roundsOf(view.messages)
  const calls = new Map(callsOfView(view.messages).map((call) => [call.id, call]))
  const clearedTokens = (id: string): number => estimator.text(clearedNoteFor(calls.get(id)))
  const droppedUntil = dropEnd(input.decisions, view)
  const hazards = resultHazards(view.messages)
  const messages: MessageCost[] = view.messages.map((message, index) => {
    // A frozen drop stays: those messages are not sent, so they neither cost nor can be cleared.
    if (index >= 1 && index < droppedUntil) return { tokens: 0, results: [] }
    let tokens = message.tokens
    const results: ResultCost[] = []
    for (const result of message.toolResults) {
      const decision = frozen.get(result.id)
      if (decision && decision.hash === result.hash) {
        const replaced =
          decision.action === 'fold' ? foldTokens(result.hash, result.text, estimator) : clearedTokens(result.id)
        tokens += replaced - result.tokens
        continue
      }
      const call = rounds.callOf.get(result.id)
      results.push({
        id: result.id,
        message: index,
        tokens: result.tokens * factor,
        replacementTokens: clearedTokens(result.id) * factor,
        tool: call?.tool ?? '',
        round: call?.round ?? Math.max(0, rounds.roundBefore[index] ?? 0),
        ...(hazards.has(result.id) ? { hazard: hazards.get(result.id) as number } : {}),
      })
    }
    return { tokens: tokens * factor, results }
  })
  const headTokens = (view.headTokens + input.extraHeadTokens) * factor
  return {
    headTokens,
    messages,
    clientTokens: view.messages.reduce((sum, message) => sum + message.tokens * factor, headTokens),
    ...(input.editableFrom !== undefined ? { editableFrom: input.editableFrom } : {}),
    rounds: rounds.count,
    budget: input.budget,
    cacheTtl: input.cacheTtl,
    msSinceLastRequest: input.msSinceLastRequest,
  }
}

/** Fold summaries' sizes by content hash: a frozen fold is re-measured on every request, its summary never changes. */
const foldTokensByHash = new Map<string, number>()
const maxFoldEntries = 50_000

function foldTokens(hash: string, text: string, estimator: TokenEstimator): number {
  let tokens = foldTokensByHash.get(hash)
  if (tokens === undefined) {
    tokens = estimator.text(foldSummary(text))
    foldTokensByHash.set(hash, tokens)
    if (foldTokensByHash.size > maxFoldEntries) foldTokensByHash.delete(foldTokensByHash.keys().next().value as string)
  }
  return tokens
}

interface Rounds {
  readonly count: number
  readonly callOf: ReadonlyMap<string, { readonly tool: string; readonly round: number }>
  /** Index of the newest round started before each message (-1: none). */
  readonly roundBefore: readonly number[]
}

/** Consecutive calling messages are one round (the Responses API lists each parallel call as its own item). */
function roundsOf(messages: readonly MessageView[]): Rounds {
  const callOf = new Map<string, { tool: string; round: number }>()
  const roundBefore: number[] = []
  let count = 0
  let previousCalled = false
  for (const message of messages) {
    roundBefore.push(count - 1)
    const calls = message.toolCallIds
    if (calls.length === 0) {
      if (message.role !== 'assistant') previousCalled = false
      continue
    }
    if (!previousCalled) count++
    previousCalled = true
    calls.forEach((id, position) => callOf.set(id, { tool: message.toolCallNames?.[position] ?? '', round: count - 1 }))
  }
  return { count, callOf, roundBefore }
}

/** End of a frozen drop that still matches the client's history (1: none). */
function dropEnd(decisions: FrozenDecisions, view: ChatView): number {
  const drop = decisions.drop
  if (!drop || typeof drop.keepFrom !== 'number') return 1
  return view.messages[drop.keepFrom]?.hash === drop.hash ? drop.keepFrom : 1
}

/** Stored decisions as own entries; a malformed store entry counts as none. */
function frozenMap(decisions: FrozenDecisions): Map<string, FrozenResult> {
  const results: unknown = decisions.results
  if (typeof results !== 'object' || results === null) return new Map()
  return new Map(Object.entries(results as Record<string, FrozenResult>))
}
