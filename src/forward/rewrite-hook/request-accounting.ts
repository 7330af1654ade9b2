import type { CompactingClient } from '../../model-call/compaction-request.ts'
import type { Accounting } from '../../request/prepared.ts'
import { clientFamily } from '../../live/client-family.ts'
import { summarizeLedger } from '../../rewrite/economy/ledger.ts'
import type { PipelineOutcome } from '../../rewrite/pipeline.ts'
import type { Refetch } from '../../rewrite/refetch.ts'
import { clientRuleOf } from '../../session/client-rule.ts'
import type { Arm } from '../../session/holdout-arm.ts'
import { firstHeader } from '../../util/headers.ts'
import type { ChatSummary, HookRequest } from './hook-request.ts'
import type { Rewritten } from './write-back.ts'

/** What the record reads of a plan: its outcome, edits aside (a worker thread keeps them). */
export type PlannedOutcome = Extract<PipelineOutcome, { kind: 'too-long' }> | Omit<Rewritten, 'edits'>

/** Who the request belongs to and which arm of the holdout that session is in. */
export interface SessionArm {
  readonly sessionId: string
  readonly arm: Arm
  readonly clientCompacted: boolean
  readonly kind: string | undefined
}

/**
 * The session's holdout arm (drawn once per session), from what was read of the request (here or in
 * a worker thread): its prompt estimate and first user message.
 */
export function sessionArmFrom(
  request: HookRequest,
  chat: ChatSummary,
  prompt: { readonly tokens: number; readonly firstUser: () => string },
  sessionId: string,
  kind: string | undefined,
): SessionArm {
  const { view } = chat
  const mark = request.deps.arms?.see(
    sessionId,
    () => ({ kind: kind ?? `unknown\u0000${view.model}`, firstUserMessage: prompt.firstUser() }),
    prompt.tokens,
  ) ?? { arm: 'treated' as const, clientCompacted: false }
  return { sessionId, arm: mark.arm, clientCompacted: mark.clientCompacted, kind }
}

/** The client whose own compaction rule ctxgate knows, by its user agent: only the request's accounting reads it. */
export function clientRule(request: HookRequest, chat: ChatSummary): Accounting['client'] {
  const rule = clientRuleOf(clientFamily(firstHeader(request.incoming['user-agent'])))
  return rule && { rule: rule.name, window: chat.limits.window, maxOutputTokens: chat.view.maxOutputTokens }
}

// Both records are written out whole: `{ ...record, more }` made a new hidden class per request on Node 20 (GC time).

/** What the request's metrics, session totals and live page count (refusalAvoided only once served). */
export function accountingFor(
  model: string,
  session: SessionArm,
  client: Accounting['client'],
  outcome: PlannedOutcome,
  clientCompaction: CompactingClient | undefined,
): Accounting {
  const rewritten = outcome.kind === 'rewritten' ? outcome : undefined
  return {
    model,
    sessionId: session.sessionId,
    arm: session.arm,
    clientCompacted: session.clientCompacted,
    ...(session.kind === undefined ? {} : { kind: session.kind }),
    ...(client ? { client } : {}),
    report: outcome.report,
    refusalAvoided: rewritten?.refusalAvoided ?? false,
    ...(clientCompaction ? { clientCompaction } : {}),
    ...(rewritten?.prefixBreak ? { prefixBreak: rewritten.prefixBreak } : {}),
    ...(rewritten?.batch ? { batchReason: rewritten.batch.reason } : {}),
    ...(rewritten && rewritten.refetches.length > 0 ? { refetches: rewritten.refetches } : {}),
    ...ledgerAccounting(rewritten),
  }
}

/** A control session's accounting: metered like any other, nothing avoided. */
export function controlAccounting(model: string, session: SessionArm): Accounting {
  return {
    model,
    sessionId: session.sessionId,
    arm: 'control',
    clientCompacted: session.clientCompacted,
    ...(session.kind === undefined ? {} : { kind: session.kind }),
    refusalAvoided: false,
  }
}

/** The regret ledger's part of the accounting: an economy batch's prediction, and reads spared by earlier ones. */
function ledgerAccounting(
  rewritten: Omit<Rewritten, 'edits'> | undefined,
): Pick<Accounting, 'ledgerBatch' | 'ledgerSaved'> {
  const batch = rewritten?.batch
  const saved = rewritten?.ledger?.savedNow
  return {
    ...(batch?.oneTimeCost !== undefined && batch.reason !== 'over_budget'
      ? {
          ledgerBatch: {
            predictedCost: batch.oneTimeCost,
            predictedSaving: (batch.savingPerRequest ?? 0) * (batch.horizon ?? 0),
            growthTokens: batch.growthTokens ?? 0,
          },
        }
      : {}),
    ...(saved && Object.keys(saved).length > 0 ? { ledgerSaved: saved } : {}),
  }
}

/** The request's log fields: session, turn, what the economy did, and a client compaction if it was one. */
export function requestLog(
  session: string,
  turn: number,
  outcome: PlannedOutcome,
  compaction: CompactingClient | undefined,
): Record<string, unknown> {
  return { session, turn, ...economyLog(outcome), ...(compaction ? { clientCompaction: compaction } : {}) }
}

/** The report for the log line and accounting, with the new batch's reason (and, for the log, why none was made). */
function economyLog(outcome: PlannedOutcome) {
  const rewritten = outcome.kind === 'rewritten' ? outcome : undefined
  const batch = rewritten?.batch
  return {
    rewrite: outcome.report,
    ...(batch ? { batch } : {}),
    ...(rewritten?.waited ? { economy: rewritten.waited } : {}),
    ...(rewritten && rewritten.refetches.length > 0 ? { refetches: refetchSummary(rewritten.refetches) } : {}),
    ...(rewritten?.ledger && rewritten.ledger.entries.length > 0
      ? { ledger: summarizeLedger(rewritten.ledger.entries) }
      : {}),
  }
}

/** For the log line: how many calls fetched again what ctxgate had cleared or folded, by tool, and their estimated tokens. */
function refetchSummary(refetches: readonly Refetch[]): { count: number; tokens: number; tools: string[] } {
  return {
    count: refetches.length,
    tokens: refetches.reduce((sum, refetch) => sum + refetch.tokens, 0),
    tools: [...new Set(refetches.map((refetch) => refetch.tool))],
  }
}
