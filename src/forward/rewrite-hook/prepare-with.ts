import type { ConversationRequest } from '../../calibration/calibration.ts'
import type { CompactingClient } from '../../model-call/compaction-request.ts'
import type { SessionHints } from '../../providers/adapter-contract.ts'
import type { PrepareResult, Prepared } from '../../request/prepared.ts'
import { promiseWritten } from '../../rewrite/marker-promise.ts'
import { finishRewrite, type DecidedRewrite, type RequestLimits } from '../../rewrite/pipeline.ts'
import { identify, type SessionIdentity } from '../../session/identity.ts'
import type { ConversationState } from '../../session/session-store.ts'
import { sessionKind } from '../../session/session-kind.ts'
import { loadConversation, nextState, refreshCalibration, saveState } from './conversation-io.ts'
import { RewriteFollowUp, usageOnly, type SentRewrite } from './follow-up.ts'
import { conversationRequest, type ReferenceCount } from './reference-count.ts'
import type { ChatSummary, HookRequest } from './hook-request.ts'
import { tooLong } from './refusal.ts'
import {
  accountingFor,
  clientRule,
  controlAccounting,
  requestLog,
  sessionArmFrom,
  type PlannedOutcome,
  type SessionArm,
} from './request-accounting.ts'

/** A body read: the hook's answer when it leaves it alone, else what its bookkeeping reads of the chat. */
export type ReadStep =
  | { readonly kind: 'untouched'; readonly result: PrepareResult }
  | {
      readonly kind: 'chat'
      readonly chat: ChatSummary
      readonly hints: SessionHints
      /** The unedited prompt's estimate. */
      readonly promptTokens: number
      /** The reference vocabulary's count of it, once that is loaded, counted when first read (reference-count.ts). */
      readonly referenceCount: ReferenceCount | undefined
      /** Only called when the holdout draws a new session's arm. */
      readonly firstUser: () => string
    }

/** What the plan reads besides the body: the conversation's state, as the main thread loaded it. */
export interface PlanInputs {
  readonly scope: string
  readonly state: ConversationState | undefined
  readonly finishedLengths: readonly number[]
  readonly sized: ConversationRequest
  readonly now: number
  readonly clientSessionId: string
}

/** What a plan sizes a request with. */
interface PlanSizes {
  readonly factor: number
  readonly limits: RequestLimits
  /** Tokens the system note adds where it goes (0 when off or already there). */
  readonly noteTokens: number
}

/** A plan and, unless the request is too long, what it wrote. */
export type PlanStep =
  | (PlanSizes & {
      readonly kind: 'too-long'
      readonly outcome: Extract<PlannedOutcome, { kind: 'too-long' }>
      readonly compaction: CompactingClient | undefined
    })
  | (PlanSizes & {
      readonly kind: 'written'
      readonly outcome: Exclude<PlannedOutcome, { kind: 'too-long' }>
      readonly written: Written
      readonly compaction: CompactingClient | undefined
    })
  /**
   * The client's body goes as sent (write-back.ts `sentAsWritten`): its records are made after
   * dispatch, and so is its plan when nothing could be decided before (send-before-planning.ts).
   */
  | { readonly kind: 'as-sent'; readonly plan: () => AsSentPlan }

/** The plan of a request sent as the client wrote it: what its records are made from. */
export interface AsSentPlan {
  readonly factor: number
  readonly noteTokens: number
  readonly decided: Extract<DecidedRewrite, { kind: 'rewritten' }>
  readonly tail: number
  readonly breakpoints: number | undefined
  /** Whether it is a client's compaction request: only its records read it, so it is asked then. */
  readonly compactionOf: () => CompactingClient | undefined
}

/** What a plan wrote into the body. */
export interface Written {
  /** The bytes to send; asked for once the conversation's state is saved. */
  readonly body: () => Buffer
  readonly headers: Readonly<Record<string, string>>
  readonly tail: number | undefined
  readonly breakpoints: number | undefined
  /** The result the next batch's entry really went ahead of, when the adapter chose another than the plan's. */
  readonly promisedResult?: string | null | undefined
  readonly hideUsageChunk: boolean
}

/** The one step the two ways of preparing differ in: reading and planning the body here, or in a worker thread. */
export interface PreparationSteps {
  read(): Promise<ReadStep>
  plan(inputs: PlanInputs): Promise<PlanStep>
}

/**
 * A chat request's preparation: identity, holdout arm, calibration, the conversation's state read
 * and saved, accounting and the too-long answer, with `steps` reading and planning the body. What
 * holds state (the session store, the calibration, the holdout arms) is used here, on the main
 * thread, whichever way the body is read. `again` prepares a refit.
 */
export async function prepareWith(
  request: HookRequest,
  steps: PreparationSteps,
  again: (request: HookRequest) => Promise<PrepareResult>,
): Promise<PrepareResult> {
  const { deps, incoming } = request
  const read = await steps.read()
  if (read.kind === 'untouched') return read.result
  const { chat } = read
  const identity = identify(incoming, read.hints, deps.config.auth.tokens.length > 0)
  const scope = identity.limitScope
  const kind = read.hints.agent === undefined ? undefined : sessionKind(scope, chat.view.model, read.hints.agent)
  const prompt = { tokens: read.promptTokens, firstUser: read.firstUser }
  const session = sessionArmFrom(request, chat, prompt, identity.sessionId, kind)
  if (session.arm === 'control') return controlForward(request, chat, session)
  await refreshCalibration(deps, chat.view.model, scope, identity.conversationKey)
  const { state, finishedLengths } = await loadConversation(request, chat, identity.conversationKey, kind)
  const sized = conversationRequest(identity.conversationKey, read.promptTokens, read.referenceCount)
  const now = (deps.now ?? Date.now)()
  const planned = await steps.plan({
    scope,
    state,
    finishedLengths,
    sized,
    now,
    clientSessionId: identity.clientSessionId,
  })
  const requests = (state?.requests ?? 0) + 1
  const records = { session, identity, kind, state, requests, now, sized }
  if (planned.kind === 'as-sent')
    return { kind: 'forward', prepared: sentBeforeRecords(request, chat, planned, records, again) }
  const log = requestLog(identity.sessionId, requests, planned.outcome, planned.compaction)
  const client = clientRule(request, chat)
  const accounting = accountingFor(chat.view.model, session, client, planned.outcome, planned.compaction)
  if (planned.kind === 'too-long')
    return { kind: 'reject', error: tooLong(request, chat, planned.limits, planned.outcome), log, accounting }
  const { outcome, written } = planned
  const next = promiseWritten(outcome.next, written.promisedResult)
  await saveState(deps, identity.conversationKey, nextState(next, written.tail, requests, now, kind), state)
  // The plan keeps room for the note before it goes in; calibration must compare what was really sent.
  const unsentNote = outcome.noteOn ? 0 : planned.noteTokens
  const sentEstimate = outcome.report.estimatedAfter / planned.factor - unsentNote
  const body = written.body()
  const sent = { sentEstimate, sized, planned: outcome.report.estimatedAfter, state, bytes: body.length }
  const prepared: Prepared = {
    body,
    headers: written.headers,
    log,
    followUp: new RewriteFollowUp(request, chat, scope, sent, again),
    hideUsageChunk: written.hideUsageChunk,
    accounting:
      written.breakpoints === undefined ? accounting : { ...accounting, breakpointsPlaced: written.breakpoints },
  }
  return { kind: 'forward', prepared }
}

/** What a request's records are made of besides its plan: who sent it, and the conversation before it. */
interface RecordInputs {
  readonly session: SessionArm
  readonly identity: SessionIdentity
  readonly kind: string | undefined
  readonly state: ConversationState | undefined
  readonly requests: number
  readonly now: number
  readonly sized: ConversationRequest
}

/**
 * A request sent as the client wrote it, before its records: the client's bytes and a follow-up now,
 * and `afterDispatch` to make the plan if it was left until then, finish its outcome, write the log
 * fields and accounting, and save the conversation's state, each exactly as the eager path does them
 * (test/property/records-after-dispatch). The follow-up reads what was sent only once they are made.
 * A refit waits for them: it plans from the state they save.
 */
function sentBeforeRecords(
  request: HookRequest,
  chat: ChatSummary,
  planned: Extract<PlanStep, { kind: 'as-sent' }>,
  records: RecordInputs,
  again: (request: HookRequest) => Promise<PrepareResult>,
): Prepared {
  const { deps, original } = request
  const { session, identity, state, requests } = records
  // Made once: a plan made after sending that fails fails the same way for every reader.
  let plan: { readonly made: AsSentPlan } | { readonly failed: unknown } | undefined
  const planOnce = (): AsSentPlan => {
    if (plan === undefined)
      try {
        plan = { made: planned.plan() }
      } catch (error) {
        plan = { failed: error }
      }
    if ('failed' in plan) throw plan.failed
    return plan.made
  }
  const sent = (): SentRewrite => {
    const { decided, factor, noteTokens } = planOnce()
    // Nothing goes in, so the note's room counts as unsent (as in prepareWith).
    const sentEstimate = decided.report.estimatedAfter / factor - noteTokens
    return { sentEstimate, sized: records.sized, planned: decided.report.estimatedAfter, state, bytes: original.length }
  }
  let recorded: Promise<Prepared> | undefined
  const afterDispatch = (): Promise<Prepared> => (recorded ??= makeRecords())
  const followUp = new RewriteFollowUp(request, chat, identity.limitScope, sent, again, afterDispatch)
  const makeRecords = async (): Promise<Prepared> => {
    const { decided, tail, breakpoints, compactionOf } = planOnce()
    const outcome = finishRewrite(decided)
    const compaction = compactionOf()
    const log = requestLog(identity.sessionId, requests, outcome, compaction)
    const accounting = accountingFor(chat.view.model, session, clientRule(request, chat), outcome, compaction)
    const next = nextState(outcome.next, tail, requests, records.now, records.kind)
    await saveState(deps, identity.conversationKey, next, state)
    return {
      body: original,
      headers: {},
      log,
      followUp,
      hideUsageChunk: false,
      accounting: breakpoints === undefined ? accounting : { ...accounting, breakpointsPlaced: breakpoints },
    }
  }
  return { body: original, headers: {}, followUp, hideUsageChunk: false, afterDispatch }
}

/**
 * A control session's request: the client's own bytes and headers, nothing added (no edits, no
 * markers, no cache key, no usage option), metered like any other. No refit: it is not helped.
 */
function controlForward(request: HookRequest, chat: ChatSummary, session: SessionArm): PrepareResult {
  return {
    kind: 'forward',
    prepared: {
      body: request.original,
      followUp: usageOnly(request.format, { body: chat.json, headers: request.incoming }),
      log: { session: session.sessionId, rewrite: 'holdout', arm: 'control' },
      accounting: controlAccounting(chat.view.model, session),
    },
  }
}
