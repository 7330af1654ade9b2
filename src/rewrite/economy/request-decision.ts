/**
 * The economy's part of one request's rewrite: the session's cadence from what it kept, the
 * break-even decision on the request as the planner will see it, and the TTL for its stable part.
 */
import type { TokenEstimator } from '../estimate.ts'
import type { ChatView, FrozenDecisions } from '../types.ts'
import { estimateCadence, type Cadence } from './cadence.ts'
import { cadenceInputOf, storedTtl, type CadenceMemory } from './cadence-memory.ts'
import { chooseStableTtl } from './cache-timing.ts'
import { decideBatch, totalTokens } from './decide.ts'
import { describeView } from './from-view.ts'
import type { ModelPrices } from './prices.ts'
import type { EconomyDecision, EconomyPolicy } from './types.ts'

/** Prices and policy for this request's model; absent under `rewrite.economy: budget-only`. */
export interface EconomySettings {
  readonly prices: ModelPrices
  readonly policy: EconomyPolicy
}

export interface RequestDecisionInput {
  readonly settings: EconomySettings
  readonly view: ChatView
  readonly decisions: FrozenDecisions
  readonly memory: CadenceMemory | undefined
  /** Requests of the session, this one included. */
  readonly requestsSoFar: number
  readonly msSinceLastRequest: number | undefined
  readonly budget: number
  readonly factor: number
  readonly estimator: TokenEstimator
  readonly extraHeadTokens: number
}

export interface RequestDecision {
  /** Undefined over budget: the planner's hard limit decides there, so the path is not priced. */
  readonly decision: EconomyDecision | undefined
  readonly cadence: Cadence
  /** '1h' when a one-hour entry on the stable head pays over the pauses expected ahead. */
  readonly stableTtl: '5m' | '1h'
}

export function decideForRequest(input: RequestDecisionInput): RequestDecision {
  const { settings } = input
  const cadence = estimateCadence(cadenceInputOf(input.memory, input.requestsSoFar))
  const conversation = describeView({
    view: input.view,
    decisions: input.decisions,
    factor: input.factor,
    estimator: input.estimator,
    extraHeadTokens: input.extraHeadTokens,
    budget: input.budget,
    cacheTtl: storedTtl(input.memory),
    msSinceLastRequest: input.msSinceLastRequest,
  })
  const decision =
    totalTokens(conversation) > conversation.budget
      ? undefined
      : decideBatch({ conversation, cadence, prices: settings.prices, policy: settings.policy })
  const ttl = chooseStableTtl({
    clientSetTtl: false,
    stableTokens: conversation.headTokens,
    cadence,
    prices: settings.prices,
  })
  return { decision, cadence, stableTtl: ttl?.ttl ?? '5m' }
}
