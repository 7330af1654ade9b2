/**
 * The break-even decision: which batch of old tool results to replace on this request, and why —
 * because the request is over budget, because the batch pays for its cache rewrite over the path
 * ahead, or because the cache has expired and the rewrite is free — or that waiting is cheaper.
 */
import { belowBudgetMaxHazard, refetchChance, refetchChanceOver } from '../clear-order.ts'
import type { Cadence } from './cadence.ts'
import { isCold } from './cache-timing.ts'
import { pricePath } from './path-cost.ts'
import { writePrice, type ModelPrices } from '../../billing/prices.ts'
import { promptTokens } from '../prompt-tokens.ts'
import type { ConversationCost, EconomyDecision, EconomyPolicy, ResultCost } from './types.ts'

export interface EconomyInput {
  readonly conversation: ConversationCost
  readonly cadence: Cadence
  readonly prices: ModelPrices
  readonly policy: EconomyPolicy
  /** What the session's earlier batches really saved per request over what was predicted (the ledger; ≤ 1, default 1). */
  readonly realization?: number
}

/**
 * The quality floor's two cheap conditions, in one place: the pipeline asks before it describes the
 * request for the economy, and the decision asks again of whatever it is handed.
 */
export function belowFloor(
  requestsSoFar: number,
  clientTokens: number,
  policy: Pick<EconomyPolicy, 'shortSessionRequests' | 'startTokens'>,
): EconomyDecision | undefined {
  if (requestsSoFar < policy.shortSessionRequests) return { kind: 'none', reason: 'short_session' }
  if (clientTokens < policy.startTokens) return { kind: 'none', reason: 'under_start' }
  return undefined
}

/** A below-budget batch or none (over budget the planner edits; the pipeline does not ask the economy then). */
export function decideBatch(input: EconomyInput): EconomyDecision {
  const { conversation, policy } = input
  const size = totalTokens(conversation)
  const floor = belowFloor(input.cadence.requestsSoFar, conversation.clientTokens, policy)
  if (floor) return floor
  const batch = eligibleResults(conversation, policy)
  if (batch.length === 0) return { kind: 'none', reason: 'nothing_eligible' }
  const cold = isCold(conversation.msSinceLastRequest, conversation.cacheTtl)
  // Priced over the conservative forecast: a batch must pay back even if the session ends soon.
  const remaining = Math.min(policy.horizonCap, Math.floor(input.cadence.conservativeRemaining))
  const editPoint = (batch[0] as ResultCost).message
  const tokensRemoved = batch.reduce((sum, result) => sum + result.tokens - result.replacementTokens, 0)
  const protectedTail = protectedTailTokens(conversation, policy.keepRecentRounds)
  const carry = carryPrice(input)
  const write = writePrice(input.prices, conversation.cacheTtl)
  // A result the agent fetches again comes back whole at the tail: written once more, then carried
  // through the protected rounds until a later batch takes it again. The batch pays for that.
  const refetchCost = expectedRefetchTokens(batch, remaining) * (write + carry * policy.keepRecentRounds)
  const path = pricePath({
    size,
    sizeAfter: size - tokensRemoved,
    keptPrefix: keptPrefixOf(conversation, editPoint),
    protectedTail,
    laterProtectedTail: laterTail(protectedTail, conversation, policy.keepRecentRounds, input.cadence.growthPerRequest),
    growthPerRequest: input.cadence.growthPerRequest,
    clearableShare: clearableShare(conversation),
    remaining,
    budget: conversation.budget,
    read: input.prices.cacheRead,
    write,
    coldNow: cold,
    coldLater: conversation.cacheTtl === '1h' ? input.cadence.pausesOver1h : input.cadence.pausesOver5m,
  })
  const savingPerRequest = tokensRemoved * carry * Math.min(1, Math.max(0, input.realization ?? 1))
  const account = batchAccountOf(path.oneTimeCost, savingPerRequest, remaining, refetchCost)
  const base = { kind: 'batch', ids: batch.map((result) => result.id), editPoint, tokensRemoved, ...account } as const
  if (account.paybackRequests > Math.min(remaining, policy.maxPaybackRequests))
    return { kind: 'none', reason: 'no_payback_in_time' }
  // Timing comes from the path (now, or a cheaper later point). "Clearly pays" is judged on average
  // over how long such sessions go on (capped like the payback): the payback test above already holds
  // it to the conservative forecast, and asking both of one low quantile would count the risk twice.
  const averageNet = savingPerRequest * input.cadence.averageRemainingWithinCap - path.oneTimeCost - refetchCost
  if (path.wait < path.batchNow || averageNet < policy.margin * path.oneTimeCost)
    return { kind: 'none', reason: 'waiting_pays_more' }
  return { ...base, reason: cold ? 'cold_cache' : 'pays_back' }
}

/**
 * What a batch is predicted to cost once (its rewrite, and the expected re-fetches of what it clears)
 * and to save on each later request, and over the conservative forecast.
 */
export function batchAccountOf(oneTimeCost: number, savingPerRequest: number, horizon: number, refetchCost = 0) {
  const cost = oneTimeCost + refetchCost
  return {
    oneTimeCost,
    savingPerRequest,
    // Requests after this one until the saving has paid the rewrite and the re-fetches back.
    paybackRequests: cost <= 0 ? 0 : savingPerRequest > 0 ? cost / savingPerRequest : Infinity,
    horizon,
    predictedNetSaving: savingPerRequest * horizon - cost,
  }
}

/** Tokens of the batch the agent is expected to fetch again within `requests` requests. */
function expectedRefetchTokens(batch: readonly ResultCost[], requests: number): number {
  return batch.reduce(
    (sum, result) =>
      sum +
      result.tokens *
        (result.riskAge
          ? refetchChanceOver(result.riskAge.risk, result.riskAge.age, requests)
          : refetchChance(result.hazard ?? 0, requests)),
    0,
  )
}

/** Price of carrying one token on a later request: a read, or a write when a pause lets the entry expire. */
function carryPrice(input: EconomyInput): number {
  const { prices, cadence, conversation } = input
  const cold = conversation.cacheTtl === '1h' ? cadence.pausesOver1h : cadence.pausesOver5m
  return (1 - cold) * prices.cacheRead + cold * writePrice(prices, conversation.cacheTtl)
}

/**
 * Results a batch may replace, oldest first: not in the newest protected rounds, not from an
 * excluded tool, bigger than what would replace them, and rarely needed again (a file read the agent
 * may still quote stays: clear-order.ts). A batch takes all of them: every one after the edit point
 * is rewritten anyway, so clearing it too only makes the rewrite cheaper.
 */
export function eligibleResults(conversation: ConversationCost, policy: EconomyPolicy): ResultCost[] {
  const firstProtectedRound = conversation.rounds - policy.keepRecentRounds
  const excluded = new Set(policy.excludeTools)
  return conversation.messages.flatMap((message) =>
    message.results.filter(
      (result) =>
        result.round < firstProtectedRound &&
        !excluded.has(result.tool) &&
        result.tokens > result.replacementTokens &&
        (result.hazard ?? 0) <= (policy.maxNeedHazard ?? belowBudgetMaxHazard) &&
        result.message >= (conversation.editableFrom ?? 0),
    ),
  )
}

export function totalTokens(conversation: ConversationCost): number {
  return promptTokens(conversation)
}

/** What a batch at `editPoint` still reads from the cache: up to the edit point, or to the marker kept before it. */
function keptPrefixOf(conversation: ConversationCost, editPoint: number): number {
  if (conversation.batchRewritesHead) return 0
  return tokensBefore(conversation, Math.min(editPoint, conversation.markerAt ?? editPoint))
}

function tokensBefore(conversation: ConversationCost, messageIndex: number): number {
  let sum = conversation.headTokens
  for (let index = 0; index < messageIndex; index++) sum += conversation.messages[index]?.tokens ?? 0
  return sum
}

/** Tokens from the first message of the newest protected rounds to the end. */
function protectedTailTokens(conversation: ConversationCost, keepRecentRounds: number): number {
  const firstProtectedRound = conversation.rounds - keepRecentRounds
  let tail = 0
  for (let index = conversation.messages.length - 1; index >= 0; index--) {
    const message = conversation.messages[index] as ConversationCost['messages'][number]
    if (message.results.some((result) => result.round < firstProtectedRound)) break
    tail += message.tokens
  }
  return tail
}

/** The protected rounds at a later batch: as many rounds at the usual growth per request, once the session shows one. */
function laterTail(current: number, conversation: ConversationCost, keepRecentRounds: number, growth: number): number {
  return growth > 0 && conversation.rounds > keepRecentRounds ? keepRecentRounds * growth : current
}

/** Share of the conversation's messages that is tool output: the part of future growth a later batch could clear. */
function clearableShare(conversation: ConversationCost): number {
  let results = 0
  let messages = 0
  for (const message of conversation.messages) {
    messages += message.tokens
    for (const result of message.results) results += result.tokens
  }
  return messages === 0 ? 0 : Math.min(1, results / messages)
}
