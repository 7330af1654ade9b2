import { limitsFor } from '../../config/model-limits.ts'
import { CtxgateError } from '../../errors.ts'
import type { PrepareResult, Prepared } from '../../request/prepared.ts'
import { identify } from '../../session/identity.ts'
import { sessionKind } from '../../session/session-kind.ts'
import { firstHeader } from '../../util/headers.ts'
import { loadConversation, nextState, refreshCalibration, saveState } from '../rewrite-hook/conversation-io.ts'
import { RewriteFollowUp, usageOnly } from '../rewrite-hook/follow-up.ts'
import type { ChatSummary, HookRequest } from '../rewrite-hook/hook-request.ts'
import { tooLong } from '../rewrite-hook/refusal.ts'
import { accountingFor, requestLog, sessionArmFrom, type SessionArm } from '../rewrite-hook/request-accounting.ts'
import { WorkerFailed, WorkersBusy, type RewriteWorkers, type WorkerLease } from './pool.ts'
import type { ChatFacts, UntouchedFacts, WorkerHeaders } from './protocol.ts'

/** The main thread's hook: a refit goes through it again; a control session's request is answered by it. */
export interface MainHook {
  readonly again: (request: HookRequest) => Promise<PrepareResult>
  readonly control: (request: HookRequest, chat: ChatSummary, session: SessionArm) => PrepareResult
}

/**
 * The hook for a large body: the same steps as on the main thread (hook.ts), with parsing,
 * planning and writing out done by a worker. Here stay what holds state: the session store, the
 * calibration, the holdout arms. A worker that fails or times out sends the body on as the client
 * wrote it (the caller's fail-open); a pool at its byte budget answers 503 in the provider's shape.
 */
export async function prepareInWorker(
  request: HookRequest,
  workers: RewriteWorkers,
  hook: MainHook,
): Promise<PrepareResult> {
  try {
    return await workers.run(request.original.length, (lease) => prepareLeased(request, lease, hook))
  } catch (error) {
    if (error instanceof WorkersBusy) return busy(error)
    if (error instanceof WorkerFailed)
      request.deps.logger.warn(
        { bytes: request.original.length, error: error.message },
        'rewrite worker failed; the request goes on as the client sent it',
      )
    throw error
  }
}

async function prepareLeased(request: HookRequest, lease: WorkerLease, hook: MainHook): Promise<PrepareResult> {
  const { deps, incoming } = request
  // A copy moves to the worker: the client's own bytes stay here for a fail-open forward and a refit.
  const read = await lease.read({
    format: request.wire,
    body: await copyOf(request.original),
    headers: own(incoming),
  })
  const limits = read.kind === 'chat' ? limitsFor(deps.config, read.model) : undefined
  if (read.kind === 'untouched' || !limits) return untouched(request, read)
  const chat: ChatSummary = {
    json: read.summary,
    view: { model: read.model, maxOutputTokens: read.maxOutputTokens, serverManaged: read.serverManaged },
    limits,
  }
  const identity = identify(incoming, read.hints, deps.config.auth.tokens.length > 0)
  const scope = identity.limitScope
  const kind = read.hints.agent === undefined ? undefined : sessionKind(scope, read.model, read.hints.agent)
  const prompt = { tokens: read.promptTokens, firstUser: () => read.firstUserMessage }
  const session = sessionArmFrom(request, chat, prompt, identity.sessionId, kind)
  if (session.arm === 'control') return hook.control(request, chat, session)
  await refreshCalibration(deps, read.model, scope, identity.conversationKey)
  const { state, finishedLengths } = await loadConversation(request, chat, identity.conversationKey, kind)
  const sized = { key: identity.conversationKey, unedited: read.promptTokens }
  const now = (deps.now ?? Date.now)()
  const planned = await lease.plan({
    scope,
    state,
    finishedLengths,
    sized,
    factorInputs: deps.calibration.factorInputs(read.model, sized.key, scope),
    rememberedLimit: deps.calibration.limit(read.model, scope),
    toldLimit: request.toldLimit,
    now,
    clientSessionId: identity.clientSessionId,
  })
  const { outcome, factor } = planned
  const requests = (state?.requests ?? 0) + 1
  const log = requestLog(identity.sessionId, requests, outcome, planned.compaction)
  const accounting = accountingFor(read.model, session, outcome, planned.compaction)
  if (outcome.kind === 'too-long')
    return { kind: 'reject', error: tooLong(request, chat, planned.limits, outcome), log, accounting }
  await saveState(deps, identity.conversationKey, nextState(outcome.next, planned.tail, requests, now, kind), state)
  const unsentNote = outcome.noteOn ? 0 : planned.noteTokens
  const sentEstimate = outcome.report.estimatedAfter / factor - unsentNote
  const body = planned.body
    ? Buffer.from(planned.body.buffer, planned.body.byteOffset, planned.body.byteLength)
    : request.original
  const sent = { sentEstimate, sized, planned: outcome.report.estimatedAfter, state, bytes: body.length }
  const prepared: Prepared = {
    body,
    headers: planned.headers ?? {},
    log,
    followUp: new RewriteFollowUp(request, chat, scope, sent, hook.again),
    hideUsageChunk: planned.hideUsageChunk ?? false,
    accounting:
      planned.breakpoints === undefined ? accounting : { ...accounting, breakpointsPlaced: planned.breakpoints },
  }
  return { kind: 'forward', prepared }
}

/** Bytes copied between turns of the event loop: a 25 MB copy in one go holds it for tens of ms on a busy machine. */
const copyStepBytes = 1024 * 1024

/** The bytes in a buffer of their own (not zero-filled first), copied a megabyte at a time. */
async function copyOf(original: Buffer): Promise<Uint8Array> {
  const copy = Buffer.allocUnsafeSlow(original.length)
  for (let at = 0; at < original.length; at += copyStepBytes) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve))
    original.copy(copy, at, at, Math.min(original.length, at + copyStepBytes))
  }
  return copy
}

/** The headers a worker reads: ctxgate's own (the mode and the budget), never the client's keys. */
function own(incoming: HookRequest['incoming']): WorkerHeaders {
  return {
    'x-ctxgate-mode': firstHeader(incoming['x-ctxgate-mode']),
    'x-ctxgate-budget': firstHeader(incoming['x-ctxgate-budget']),
  }
}

/** As readChat answers a body it leaves alone: the client's bytes, read for usage, counted under its model. */
function untouched(request: HookRequest, read: ChatFacts | UntouchedFacts): PrepareResult {
  const summary = read.summary
  const reason = read.kind === 'untouched' ? read.reason : 'no-model-limits'
  return {
    kind: 'forward',
    prepared: {
      body: request.original,
      followUp: usageOnly(request.format, summary && { body: summary, headers: request.incoming }),
      log: { rewrite: reason },
      accounting: { model: read.model, refusalAvoided: false },
    },
  }
}

function busy(error: WorkersBusy): PrepareResult {
  return {
    kind: 'reject',
    error: new CtxgateError(
      'CTXGATE_OVERLOADED',
      `ctxgate is busy rewriting other large requests; retry shortly (${error.message}).`,
    ),
    log: { rewrite: 'workers-busy' },
    accounting: { model: 'unknown', refusalAvoided: false },
  }
}
