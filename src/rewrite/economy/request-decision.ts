/**
 * The economy's part of one request's rewrite: the session's cadence from what it kept, the
 * break-even decision on the request as the planner will see it, and the TTL for its stable part.
 */
import type { TokenEstimator } from '../estimate.ts'
import type { ChatView, FrozenDecisions } from '../types.ts'
import { estimateCadence } from './cadence.ts'
import { cadenceInputOf, type CadenceMemory } from './cadence-memory.ts'
import { chooseStableTtl } from './cache-timing.ts'
import { decideBatch, totalTokens } from './decide.ts'
import { describeView } from './from-view.ts'
import type { ModelPrices } from '../../billing/prices.ts'
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
  /** Request counts of finished sessions of its kind (none known: the session's own Lindy estimate). */
  readonly finishedLengths?: readonly number[]
  readonly msSinceLastRequest: number | undefined
  readonly budget: number
  readonly factor: number
  /** The upstream's count per estimated token, for the start point (PipelineInput.countFactor). */
  readonly countFactor?: number
  readonly estimator: TokenEstimator
  readonly extraHeadTokens: number
  /** The conversation's first edit also switches the system note on (it joins the head). */
  readonly noteSwitchesOn?: boolean
  /** Results in messages before this one are not edited (the previous request's cache marker). */
  readonly editableFrom?: number
  /** Message the previous request's marker sits ahead of (0: none known); see ConversationCost.markerAt. */
  readonly markerAt?: number
  /** What earlier batches of the session really saved per request over what was predicted (the ledger). */
  readonly realization?: number
}

/**
 * The break-even decision on this request as the planner will see it (frozen decisions re-applied);
 * undefined over budget, where the planner's hard limit decides and the path is not priced.
 */
export function decideForRequest(input: RequestDecisionInput): EconomyDecision | undefined {
  const { settings } = input
  const conversation = describeView({
    view: input.view,
    decisions: input.decisions,
    factor: input.factor,
    ...(input.countFactor !== undefined ? { countFactor: input.countFactor } : {}),
    estimator: input.estimator,
    extraHeadTokens: input.extraHeadTokens,
    budget: input.budget,
    // The messages a batch rewrites are always cached under ctxgate's 5-minute markers; only the head may hold 1 hour.
    cacheTtl: '5m',
    msSinceLastRequest: input.msSinceLastRequest,
    ...(input.editableFrom !== undefined ? { editableFrom: input.editableFrom } : {}),
  })
  if (totalTokens(conversation) > conversation.budget) return undefined
  const marked = input.markerAt === undefined ? conversation : { ...conversation, markerAt: input.markerAt }
  const counted = estimateCadence({
    ...cadenceInputOf(input.memory, input.requestsSoFar, input.finishedLengths),
    quantile: settings.policy.forecastQuantile,
  })
  // Growth is remembered in raw estimates (the factor moves between requests); the conversation is priced in calibrated ones.
  const cadence = { ...counted, growthPerRequest: counted.growthPerRequest * input.factor }
  const decide = (priced: typeof marked): EconomyDecision =>
    decideBatch({
      conversation: priced,
      cadence,
      prices: settings.prices,
      policy: settings.policy,
      ...(input.realization !== undefined ? { realization: input.realization } : {}),
    })
  const without = decide(marked)
  // The note joins the head only where the batch pays with that rewrite too; else the batch goes without it.
  // Rewriting the head too only costs more, so where no batch pays without it none pays with it: priced once.
  if (!input.noteSwitchesOn || without.kind !== 'batch') return without
  const withNote = decide({ ...marked, batchRewritesHead: true })
  return withNote.kind === 'batch' ? withNote : { ...without, noteDeferred: true }
}

/** '1h' when a one-hour entry on the stable head pays over the pauses expected ahead, else '5m'. */
export function stableTtlFor(
  settings: EconomySettings,
  memory: CadenceMemory | undefined,
  requestsSoFar: number,
  headTokens: number,
  finishedLengths: readonly number[] = [],
): '5m' | '1h' {
  const cadence = estimateCadence(cadenceInputOf(memory, requestsSoFar, finishedLengths))
  const choice = chooseStableTtl({ clientSetTtl: false, stableTokens: headTokens, cadence, prices: settings.prices })
  return choice?.ttl ?? '5m'
}
