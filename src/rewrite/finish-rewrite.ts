import { writePrice } from '../billing/prices.ts'
import { nextCadenceMemory } from './economy/cadence-memory.ts'
import { stepLedger, type LedgerUpdate } from './economy/ledger.ts'
import { stableTtlFor } from './economy/request-decision.ts'
import type { EconomyDecision } from './economy/types.ts'
import { detectPrefixBreak, prefixSignatures, type PrefixBreak } from './prefix-break.ts'
import { findRefetches, type Refetch } from './refetch.ts'
import type {
  BatchAccount,
  ConversationMemory,
  DecidedRewrite,
  PipelineInput,
  PipelineOutcome,
} from './pipeline-types.ts'
import type { RewriteReport } from './types.ts'

/** The whole outcome of a decided rewrite: what it sends, and what the request's records and the next request read. */
export function finishRewrite(decided: Extract<DecidedRewrite, { kind: 'rewritten' }>): Rewritten
export function finishRewrite(decided: DecidedRewrite): PipelineOutcome
export function finishRewrite(decided: DecidedRewrite): PipelineOutcome {
  if (decided.kind === 'too-long') return decided
  const { report, noteOn, planning } = decided
  const { input, decision, cold, noteHeld, marker } = planning
  const { memory } = input
  const stableTtl = stableTtlOf(input, planning.noteTokens)
  const promise = report.newBatch ? decided.followingEditResult : marker
  const ledger = ledgerOf(input, decision, report, cold)
  const shape = prefixShape(input, report, noteOn, cold)
  return {
    kind: 'rewritten',
    edits: decided.edits,
    report,
    noteOn,
    prefixBreak: shape.prefixBreak,
    previousTail: decided.previousTail,
    nextEditResult: decided.nextEditResult,
    followingEditResult: decided.followingEditResult,
    refusalAvoided: report.estimatedBefore + input.view.maxOutputTokens > input.limits.window,
    batch: report.newBatch ? batchAccount(decision, growthOf(input, report), report) : undefined,
    waited: decision?.kind === 'none' && !report.newBatch ? decision.reason : undefined,
    stableTtl,
    refetches: refetchesOf(input),
    ledger,
    next: {
      decisions: planning.decisions,
      ...(ledger && ledger.entries.length > 0 ? { ledger: ledger.entries } : {}),
      noteOn,
      ...(noteHeld && !noteOn ? { noteDeferred: true } : {}),
      ...shape.remembered,
      ...(promise !== undefined ? { nextEditResult: promise } : {}),
      ...(!report.newBatch && promise === memory?.nextEditResult && memory?.nextEditCleared
        ? { nextEditCleared: true }
        : {}),
      economy: nextCadenceMemory(memory?.economy, {
        unedited: report.estimatedBefore / input.factor,
        gapMs: planning.gapMs,
        cacheTtl: stableTtl,
      }),
    },
  }
}

type Rewritten = Extract<PipelineOutcome, { kind: 'rewritten' }>

/** What the next request compares itself with to tell a client's own history edit: count, signature, model. */
function rememberedShape(
  input: PipelineInput,
  signature: string,
): Pick<ConversationMemory, 'messageCount' | 'prefixSignature' | 'model'> {
  const { view } = input
  return { messageCount: view.messages.length, prefixSignature: signature, model: view.model }
}

/** Whether the cached prefix broke and why, and the shape the next request compares itself with (one walk for both signatures). */
function prefixShape(
  input: PipelineInput,
  report: RewriteReport,
  noteOn: boolean,
  cold: boolean,
): { readonly prefixBreak: PrefixBreak | undefined; readonly remembered: ReturnType<typeof rememberedShape> } {
  const { view, memory } = input
  const signatures = signaturesOf(view, memory)
  const prefixBreak = detectPrefixBreak({
    previous: memory,
    view,
    report,
    noteOn,
    // The conversation's messages sit under 5-minute markers whatever the head's TTL.
    expired: cold,
    ...(signatures.atPrevious !== undefined ? { signatureAtPrevious: signatures.atPrevious } : {}),
  })
  return { prefixBreak, remembered: rememberedShape(input, signatures.whole) }
}

/** This request's signature and, when the previous request's count fits in it, the signature at that count, in one walk. */
function signaturesOf(
  view: PipelineInput['view'],
  memory: ConversationMemory | undefined,
): ReturnType<typeof prefixSignatures> {
  const count = view.messages.length
  const previous = memory?.messageCount
  return prefixSignatures(view, previous !== undefined && previous <= count ? previous : undefined, count)
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

/** The economy's reason for a batch it decided; one the planner made on its own is the budget's hard limit, or a restore below it. */
function batchAccount(
  decision: EconomyDecision | undefined,
  growthTokens: number,
  report: RewriteReport,
): BatchAccount {
  if (decision?.kind !== 'batch')
    return { reason: (report.restored ?? 0) > 0 && report.estimatedBefore <= report.budget ? 'restore' : 'over_budget' }
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
