/**
 * Builds the economy's description of a request from the rewrite view: sizes as the planner counts
 * them (times the calibration factor), results already frozen counted at their replacement's size
 * and left out of any new batch, each result with its tool name and the round it answers.
 */
import { callsOfView, hazardOf, resultRiskAges } from '../clear-order.ts'
import type { TokenEstimator } from '../estimate.ts'
import { clearedNoteFor, foldSummaryOf, readFoldOf } from '../notes.ts'
import { readPathOf } from '../read-fold.ts'
import { frozenDropKeepFrom, frozenResults, restoredResults } from '../frozen.ts'
import { frozenInputSavings } from '../input-plan.ts'
import { roundsOf } from '../rounds.ts'
import type { ChatView, FrozenDecisions } from '../types.ts'
import type { ConversationCost, MessageCost, ResultCost } from './types.ts'

export interface DescribeInput {
  readonly view: ChatView
  readonly decisions: FrozenDecisions
  /** Calibration: estimates times this are an upper bound on the real count. */
  readonly factor: number
  /** The upstream's count per estimated token: `clientTokens` (the start point's measure) is sized with it. Absent: `factor`. */
  readonly countFactor?: number
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
  const frozen = frozenResults(input.decisions)
  // Restored on use (restore.ts): the agent showed it needs them, so no batch below budget takes them again.
  const restored = restoredResults(input.decisions)
  const rounds = roundsOf(view.messages)
  const calls = new Map(callsOfView(view.messages).map((call) => [call.id, call]))
  const clearedTokens = (id: string): number => estimator.text(clearedNoteFor(calls.get(id)))
  const droppedUntil = frozenDropKeepFrom(input.decisions, view) ?? 1
  const riskAges = resultRiskAges(view.messages)
  // Old inputs cleared on an earlier request stay cleared (input-plan.ts): their messages are sent smaller.
  const inputSavings = frozenInputSavings(view, input.decisions, estimator)
  const messages: MessageCost[] = view.messages.map((message, index) => {
    // A frozen drop stays: those messages are not sent, so they neither cost nor can be cleared.
    if (index >= 1 && index < droppedUntil) return { tokens: 0, results: [] }
    let tokens = message.tokens - (inputSavings.get(index) ?? 0)
    const results: ResultCost[] = []
    for (const result of message.toolResults) {
      const decision = frozen.get(result.id)
      if (decision && decision.hash === result.hash) {
        const readPath = decision.action === 'fold-read' ? readPathOf(calls.get(result.id)) : undefined
        const replaced =
          readPath !== undefined
            ? estimator.text(readFoldOf(result, readPath))
            : decision.action === 'fold'
              ? foldTokens(result.hash, result.text, estimator)
              : clearedTokens(result.id)
        tokens += replaced - result.tokens
        continue
      }
      if (restored.get(result.id)?.hash === result.hash) continue
      const call = rounds.callOf.get(result.id)
      const riskAge = riskAges.get(result.id)
      results.push({
        id: result.id,
        message: index,
        tokens: result.tokens * factor,
        replacementTokens: clearedTokens(result.id) * factor,
        tool: call?.tool ?? '',
        round: call?.round ?? Math.max(0, rounds.roundAt[index] ?? 0),
        ...(riskAge ? { hazard: hazardOf(riskAge.risk, riskAge.age), riskAge } : {}),
      })
    }
    return { tokens: tokens * factor, results }
  })
  const headTokens = (view.headTokens + input.extraHeadTokens) * factor
  return {
    headTokens,
    messages,
    clientTokens:
      view.messages.reduce((sum, message) => sum + message.tokens, view.headTokens + input.extraHeadTokens) *
      (input.countFactor ?? factor),
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
    // The planner's own summary of this content (memoized there too): one fold summary per result, not two.
    tokens = estimator.text(foldSummaryOf({ hash, text }))
    foldTokensByHash.set(hash, tokens)
    if (foldTokensByHash.size > maxFoldEntries) foldTokensByHash.delete(foldTokensByHash.keys().next().value as string)
  }
  return tokens
}
