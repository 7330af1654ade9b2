import { isCold } from './economy/cache-timing.ts'
import { nextCadenceMemory, type CadenceMemory } from './economy/cadence-memory.ts'
import type { EditPointPrices } from './economy/edit-point.ts'
import { decideForRequest, stableTtlFor, type EconomySettings } from './economy/request-decision.ts'
import type { BatchReason, EconomyDecision, NoBatchReason } from './economy/types.ts'
import {
  realizationOf as ledgerRealization,
  stepLedger,
  type LedgerEntry,
  type LedgerUpdate,
} from './economy/ledger.ts'
import { writePrice } from './economy/prices.ts'
import type { TokenEstimator } from './estimate.ts'
import { heldBefore, nextEditOf, promiseSpent } from './marker-promise.ts'
import { noteGoesIn, noteHeldBack, noteJoinsHeadNow } from './note-switch.ts'
import { planRewrite } from './plan.ts'
import { findRefetches, type Refetch } from './refetch.ts'
import { detectPrefixBreak, prefixSignature, type PrefixBreak } from './prefix-break.ts'
import {
  noDecisions,
  type RewriteOutcome,
  type ChatView,
  type Edit,
  type FrozenDecisions,
  type RewritePolicy,
  type RewriteReport,
} from './types.ts'

/** What a conversation remembers of its previous request, as far as rewriting the next one needs. */
export interface ConversationMemory {
  readonly decisions: FrozenDecisions
  /** Index of the previous request's last message in its rewritten form (for a cache breakpoint). */
  readonly previousTail?: number
  /** The system-prompt note is on for this conversation (from its first edit on, then always). */
  readonly noteOn?: boolean
  /** How many messages the client sent last time, and a signature of them, to tell when it rewrote its history. */
  readonly messageCount?: number
  readonly prefixSignature?: string
  /** Requests the conversation has sent before this one, and when it sent the last (the caller's clock). */
  readonly requests?: number
  readonly lastSeen?: number
  /** What the cadence estimator needs: growth, gaps, the previous unedited size and cache TTL. */
  readonly economy?: CadenceMemory
  /** The model of the previous request (caches are per model). */
  readonly model?: string
  /** The tool result the previous request kept a cache marker just ahead of (see `holdBefore`). */
  readonly nextEditResult?: string
  /** A below-budget batch was made without the system note, because adding it at the head would not have paid. */
  readonly noteDeferred?: boolean
  /** The regret ledger of the session's economy batches (economy/ledger.ts). */
  readonly ledger?: readonly LedgerEntry[]
}

/** The model's limits as they bear on this request. */
export interface RequestLimits {
  readonly window: number
  /** Prompt tokens to stay under from configuration and headers (output allowance already taken off). */
  readonly budget: number
  /** The prompt limit the upstream itself named in an earlier refusal, if any. */
  readonly learnedLimit?: number
}

/** The note ctxgate adds to the system prompt, and the tokens it adds there as the adapter writes it (0 when already there). */
export interface SystemNoteCost {
  readonly text: string
  readonly tokens: number
  /** `edit-point`: it goes right after the earliest edit, so it costs the cache no more than the edit does. Default `head`. */
  readonly at?: 'head' | 'edit-point'
  /** `first-request`: at the head from the first request, so it never changes the prefix later. Default `first-edit`. */
  readonly from?: 'first-edit' | 'first-request'
}

/**
 * Everything one rewrite decision depends on, by name. Coming inputs (prices per model, the
 * session's cadence: turns so far, time between requests, requests still expected) join here as
 * named fields, so no caller ever passes a positional flag.
 */
export interface PipelineInput {
  readonly view: ChatView
  /** Undefined on a conversation's first request, or when its state could not be read. */
  readonly memory: ConversationMemory | undefined
  readonly limits: RequestLimits
  readonly policy: RewritePolicy
  /** Calibration: estimates times this are an upper bound on the real count. */
  readonly factor: number
  readonly estimator: TokenEstimator
  /** Undefined when the note is turned off. */
  readonly note: SystemNoteCost | undefined
  /** Prices and policy of the cache-priced economy; undefined under `budget-only` (edits only when over budget). */
  readonly economy?: EconomySettings
  /** The caller's clock, in milliseconds: gaps between requests and whether the cache went cold. */
  readonly now?: number
  /** Request counts of finished sessions of the same kind (same agent, model family and tenant), as the store kept them. */
  readonly finishedLengths?: readonly number[]
  /**
   * Prices for where the cache marker ahead of the next edit goes (economy/edit-point.ts): not ahead
   * of small old results too far from the rest to be worth a batch reaching back to. Batches then
   * start at or after the marker the previous request kept (`holdBefore`).
   */
  readonly reachBack?: EditPointPrices
}

/** Why this request made a new batch of edits (if it did), and what the economy expected of it. */
export interface BatchAccount {
  readonly reason: BatchReason
  /** Uncached-input tokens the batch costs once (its cache rewrite), as the economy priced it. */
  readonly oneTimeCost?: number
  /** Uncached-input tokens each later request is predicted to save. */
  readonly savingPerRequest?: number
  /** Later requests until the saving pays the one-time cost back. */
  readonly paybackRequests?: number
  /** Requests ahead it was priced over (the conservative forecast). */
  readonly horizon?: number
  /** Saving over that horizon less the one-time cost, in uncached-input tokens. */
  readonly predictedNetSaving?: number
  /** What the client added since its previous request (ctxgate's estimate): the part of the batch request's writes that is not the batch's. */
  readonly growthTokens?: number
}

/** What the session stores for the next request (the tail comes from the adapter, once the edits are written). */
export type NextMemory = Omit<ConversationMemory, 'previousTail'>

export type PipelineOutcome =
  | { readonly kind: 'too-long'; readonly report: RewriteReport; readonly message: string }
  | {
      readonly kind: 'rewritten'
      readonly edits: readonly Edit[]
      readonly report: RewriteReport
      /** The system note goes into this request. */
      readonly noteOn: boolean
      readonly prefixBreak: PrefixBreak | undefined
      /** Where the previous request ended, for a cache breakpoint; undefined after a new cut made it meaningless. */
      readonly previousTail: number | undefined
      /** The tool result this request's new batch starts at, or else the next batch will: a cache breakpoint goes just ahead of it. */
      readonly nextEditResult: string | undefined
      /** With a new batch: where the batch after it will start. Its block is written fresh now, so a marker there writes an entry under either cache-write reading. */
      readonly followingEditResult: string | undefined
      /** As sent by the client, the request would not have fit the model's window. */
      readonly refusalAvoided: boolean
      /** The new batch of edits on this request and why; undefined when none. */
      readonly batch: BatchAccount | undefined
      /** Why the economy made no batch below budget (for the log); undefined when it did, or is off. */
      readonly waited: NoBatchReason | undefined
      /** TTL for the stable head's cache marker. */
      readonly stableTtl: '5m' | '1h'
      /** Calls new in this request that fetch again what ctxgate cleared or folded (refetch.ts). */
      readonly refetches: readonly Refetch[]
      /** The ledger after this request: earlier batches credited with its spared reads, its own batch filed (economy on). */
      readonly ledger: LedgerUpdate | undefined
      readonly next: NextMemory
    }

/** Share of a limit the upstream named that ctxgate plans to: its count and ours differ a little. */
const learnedLimitMargin = 0.97

/**
 * One request's rewrite, pure: the budget, the note's room in it, the plan (frozen decisions first,
 * then a batch when over), whether the note is on, whether the cache prefix broke and why, and what
 * to remember for the next request.
 */
export function runPipeline(input: PipelineInput): PipelineOutcome {
  const { view, memory, note } = input
  const budget = effectiveBudget(input.limits, view.maxOutputTokens)
  // Counted whether or not the note goes in yet, so turning it on never breaks the budget.
  const noteTokens = note?.tokens ?? 0
  const gapMs = gapSince(memory?.lastSeen, input.now)
  const { planned, decision } = planWithEconomy(input, {
    budget,
    noteTokens,
    gapMs,
    holdBefore: heldBefore(input, gapMs),
  })
  const report = planned.report
  if (planned.kind === 'too-long') return { kind: 'too-long', report, message: planned.message }
  const cold = isCold(gapMs, '5m')
  const noteHeld = noteHeldBack(memory, decision, report, cold)
  const noteOn = noteGoesIn(note, memory, report) && !noteHeld
  const marker = nextEditOf(input, input.memory?.decisions ?? noDecisions, gapMs)
  const following = report.newBatch ? nextEditOf(input, planned.decisions, undefined) : undefined
  const stableTtl = stableTtlOf(input, noteTokens)
  const promise = report.newBatch ? following : marker
  const ledger = ledgerOf(input, decision, report, cold)
  return {
    kind: 'rewritten',
    edits: planned.edits,
    report,
    noteOn,
    prefixBreak: detectPrefixBreak({
      previous: memory,
      view,
      report,
      noteOn,
      // The conversation's messages sit under 5-minute markers whatever the head's TTL.
      expired: cold,
    }),
    previousTail: tailStale(report, memory) ? undefined : memory?.previousTail,
    nextEditResult: marker,
    followingEditResult: following,
    refusalAvoided: report.estimatedBefore + view.maxOutputTokens > input.limits.window,
    batch: report.newBatch ? batchAccount(decision, growthOf(input, report)) : undefined,
    waited: decision?.kind === 'none' && !report.newBatch ? decision.reason : undefined,
    stableTtl,
    refetches: refetchesOf(input),
    ledger,
    next: {
      decisions: planned.decisions,
      ...(ledger && ledger.entries.length > 0 ? { ledger: ledger.entries } : {}),
      noteOn,
      ...(noteHeld && !noteOn ? { noteDeferred: true } : {}),
      ...rememberedShape(input),
      ...(promise !== undefined ? { nextEditResult: promise } : {}),
      economy: nextCadenceMemory(memory?.economy, {
        unedited: report.estimatedBefore / input.factor,
        gapMs,
        cacheTtl: stableTtl,
      }),
    },
  }
}

/** What the next request compares itself with to tell a client's own history edit: count, signature, model. */
function rememberedShape(input: PipelineInput): Pick<ConversationMemory, 'messageCount' | 'prefixSignature' | 'model'> {
  const { view } = input
  return {
    messageCount: view.messages.length,
    prefixSignature: prefixSignature(view, view.messages.length),
    model: view.model,
  }
}

/** A new cut, or a batch that edits before the previous tail, changed what follows it: a marker there would find nothing. */
function tailStale(report: RewriteReport, memory: ConversationMemory | undefined): boolean {
  if (!report.newBatch) return false
  return report.droppedMessages > 0 || report.firstEditedMessage <= (memory?.previousTail ?? -1)
}

/** Tokens the client's prompt grew by since its previous request, as the planner counts them. */
function growthOf(input: PipelineInput, report: RewriteReport): number {
  const previous = input.memory?.economy?.unedited
  return typeof previous === 'number' ? Math.max(0, Math.round(report.estimatedBefore - previous * input.factor)) : 0
}

/** The session's ledger after this request; undefined with the economy off. */
function ledgerOf(
  input: PipelineInput,
  decision: EconomyDecision | undefined,
  report: RewriteReport,
  cold: boolean,
): LedgerUpdate | undefined {
  const settings = input.economy
  if (!settings) return undefined
  const filed = decision?.kind === 'batch' && report.newBatch && decision.reason !== 'over_budget'
  return stepLedger(input.memory?.ledger, {
    request: (input.memory?.requests ?? 0) + 1,
    carryPrice: cold ? writePrice(settings.prices, '5m') : settings.prices.cacheRead,
    ...(filed
      ? {
          batch: {
            reason: decision.reason,
            predictedCost: decision.oneTimeCost,
            savingPerRequest: decision.savingPerRequest,
            horizon: decision.horizon,
            removed: decision.tokensRemoved,
          },
        }
      : {}),
  })
}

/** TTL for the stable head's marker: one hour when the session's pauses make it pay (economy on). */
function stableTtlOf(input: PipelineInput, noteTokens: number): '5m' | '1h' {
  if (!input.economy) return '5m'
  const requestsSoFar = (input.memory?.requests ?? 0) + 1
  const headTokens = (input.view.headTokens + noteTokens) * input.factor
  return stableTtlFor(input.economy, input.memory?.economy, requestsSoFar, headTokens, input.finishedLengths)
}

interface Sizes {
  readonly budget: number
  readonly noteTokens: number
  readonly gapMs: number | undefined
  readonly holdBefore: number | undefined
}

/**
 * Today's plan first (frozen decisions, then the budget's hard limit). Only when that makes no new
 * batch is the economy asked, and only past its cheap checks (short session, start point), so a
 * request it cannot edit costs no path pricing; a batch it decides is planned again, frozen.
 */
function planWithEconomy(
  input: PipelineInput,
  sizes: Sizes,
): { readonly planned: RewriteOutcome; readonly decision: EconomyDecision | undefined } {
  const plan = (batch?: readonly string[]): RewriteOutcome =>
    planRewrite({
      // Not `{ ...view, headTokens }`: on Node 20 that gives every request's view its own hidden class.
      view: Object.assign({}, input.view, { headTokens: input.view.headTokens + sizes.noteTokens }),
      decisions: input.memory?.decisions ?? noDecisions,
      budget: sizes.budget,
      policy: input.policy,
      factor: input.factor,
      estimator: input.estimator,
      ...(batch ? { batch } : {}),
      ...(sizes.holdBefore !== undefined ? { holdBefore: sizes.holdBefore } : {}),
      request: (input.memory?.requests ?? 0) + 1,
    })
  const planned = plan()
  const settings = input.economy
  // The provider manages a server-managed conversation's context itself: ctxgate makes no content edits to it.
  if (!settings || input.view.serverManaged === true || planned.kind === 'too-long' || planned.report.newBatch)
    return { planned, decision: undefined }
  const decision = economyDecision(input, settings, sizes, planned.report.estimatedBefore)
  return decision?.kind === 'batch' ? { planned: plan(decision.ids), decision } : { planned, decision }
}

function economyDecision(
  input: PipelineInput,
  settings: EconomySettings,
  sizes: Sizes,
  sentByClient: number,
): EconomyDecision | undefined {
  const requestsSoFar = (input.memory?.requests ?? 0) + 1
  if (requestsSoFar < settings.policy.shortSessionRequests) return { kind: 'none', reason: 'short_session' }
  if (sentByClient < settings.policy.startTokens) return { kind: 'none', reason: 'under_start' }
  if (promiseSpent(input, sizes.gapMs)) return { kind: 'none', reason: 'marker_moving' }
  return decideForRequest({
    settings,
    view: input.view,
    decisions: input.memory?.decisions ?? noDecisions,
    memory: input.memory?.economy,
    requestsSoFar,
    ...(input.finishedLengths ? { finishedLengths: input.finishedLengths } : {}),
    msSinceLastRequest: sizes.gapMs,
    budget: sizes.budget,
    factor: input.factor,
    estimator: input.estimator,
    extraHeadTokens: sizes.noteTokens,
    noteSwitchesOn: noteJoinsHeadNow(input.note, input.memory),
    ...realizationOf(input.memory?.ledger),
    ...(sizes.holdBefore !== undefined ? { editableFrom: sizes.holdBefore } : {}),
    // Warm and no marker kept: no entry is known past the head, so the batch is priced as rewriting from it.
    ...(isCold(sizes.gapMs, '5m') ? {} : { markerAt: sizes.holdBefore ?? 0 }),
  })
}

/** The economy's reason for a batch it decided; a batch the planner made on its own is the budget's hard limit. */
function batchAccount(decision: EconomyDecision | undefined, growthTokens: number): BatchAccount {
  if (decision?.kind !== 'batch') return { reason: 'over_budget' }
  return {
    reason: decision.reason,
    growthTokens,
    oneTimeCost: Math.round(decision.oneTimeCost),
    savingPerRequest: Math.round(decision.savingPerRequest),
    ...(Number.isFinite(decision.paybackRequests)
      ? { paybackRequests: Math.round(decision.paybackRequests * 10) / 10 }
      : {}),
    horizon: decision.horizon,
    predictedNetSaving: Math.round(decision.predictedNetSaving),
  }
}

/** What the session's earlier batches really saved per request over what was predicted, when the ledger can tell. */
function realizationOf(ledger: readonly LedgerEntry[] | undefined): { realization?: number } {
  const realization = ledgerRealization(ledger)
  return realization === undefined ? {} : { realization }
}

/** Re-fetches among the calls the client added since its previous request. */
function refetchesOf(input: PipelineInput): readonly Refetch[] {
  const memory = input.memory
  if (!memory?.decisions || memory.messageCount === undefined) return []
  return findRefetches({
    view: input.view,
    decisions: memory.decisions,
    newFrom: memory.messageCount,
    request: (memory.requests ?? 0) + 1,
  })
}

/** Time since the previous request; unknown on a first request, or when replicas' clocks disagree (negative). */
function gapSince(lastSeen: number | undefined, now: number | undefined): number | undefined {
  if (typeof lastSeen !== 'number' || now === undefined || now < lastSeen) return undefined
  return now - lastSeen
}

/** Once the upstream has named its real limit, it wins over configuration (a window set too large). */
export function effectiveBudget(limits: RequestLimits, maxOutputTokens: number): number {
  return limits.learnedLimit === undefined
    ? limits.budget
    : Math.min(limits.budget, limits.learnedLimit * learnedLimitMargin - maxOutputTokens)
}
