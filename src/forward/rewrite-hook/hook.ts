import { compactionRequestOf } from '../../model-call/compaction-request.ts'
import type { PrepareBody, PrepareResult, Prepared } from '../../request/prepared.ts'
import type { WireFormat } from '../../providers/provider-contract.ts'
import { chatFormat } from '../../providers/registry.ts'
import { runPipeline, type PipelineOutcome } from '../../rewrite/pipeline.ts'
import { identify } from '../../session/identity.ts'
import { sessionKind } from '../../session/session-kind.ts'
import { HoldoutArms } from '../../session/holdout-arm.ts'
import { planCalibrated } from './calibrated-plan.ts'
import { loadConversation, nextState, refreshCalibration, saveState } from './conversation-io.ts'
import { RewriteFollowUp, usageOnly } from './follow-up.ts'
import type { ChatSummary, HookRequest, RewriteHookDeps } from './hook-request.ts'
import { prepareInWorker } from '../rewrite-workers/prepare-in-worker.ts'
import { promptTokens } from '../../rewrite/prompt-tokens.ts'
import { pipelineInput } from './pipeline-input.ts'
import { readChat, yieldToOtherRequests } from './read-chat.ts'
import { tooLong } from './refusal.ts'
import { accountingFor, controlAccounting, requestLog, sessionArmOf, type SessionArm } from './request-accounting.ts'
import { bodyToSend } from './serialize.ts'
import { writeBack } from './write-back.ts'

export type { RewriteHookDeps } from './hook-request.ts'

/** The request side of the rewrite engine: parse, look up the conversation, plan, write back, remember. */
export function createRewriteHook(deps: RewriteHookDeps): (format: WireFormat) => PrepareBody | undefined {
  const withArms = { ...deps, arms: deps.arms ?? new HoldoutArms(deps.config.rewrite.holdout) }
  return (format) => {
    // Each rewritable wire format's adapter and usage reader come from the provider registry.
    const entry = chatFormat(format)
    if (!entry) return undefined
    return (body, incoming) =>
      prepareChat({ deps: withArms, format: entry, wire: format, original: body, incoming, isRefit: false })
  }
}

async function prepareChat(request: HookRequest): Promise<PrepareResult> {
  const { deps, format, incoming } = request
  if (deps.workers && request.original.length >= deps.config.rewriteWorkers.aboveBytes)
    return prepareInWorker(request, deps.workers, { again: prepareChat, control: controlForward })
  const read = await readChat(request)
  if (read.kind === 'untouched') return read.result
  const { json, view, large } = read.chat
  const hints = format.adapter.sessionHints(json, view)
  const identity = identify(incoming, hints, deps.config.auth.tokens.length > 0)
  const kind = hints.agent === undefined ? undefined : sessionKind(identity.limitScope, view.model, hints.agent)
  const session = sessionArmOf(request, read.chat, identity.sessionId, kind)
  if (session.arm === 'control') return controlForward(request, read.chat, session)
  await refreshCalibration(deps, view.model, identity.limitScope, identity.conversationKey)
  const { state, finishedLengths } = await loadConversation(request, read.chat, identity.conversationKey, kind)
  const sized = { key: identity.conversationKey, unedited: promptTokens(view) }
  const now = (deps.now ?? Date.now)()
  const input = pipelineInput(request, read.chat, identity.limitScope)
  const plan = (factor: number): PipelineOutcome =>
    runPipeline({ ...input, memory: state, factor, now, finishedLengths })
  const { outcome, factor } = planCalibrated(plan, (sentAfterEdits) =>
    deps.calibration.factor(view.model, { ...sized, ...sentAfterEdits }, identity.limitScope),
  )
  const compaction = compactionRequestOf(json)
  const log = requestLog(identity.sessionId, (state?.requests ?? 0) + 1, outcome, compaction)
  const accounting = accountingFor(view.model, session, outcome, compaction)
  if (outcome.kind === 'too-long')
    return { kind: 'reject', error: tooLong(request, read.chat, input.limits, outcome), log, accounting }
  const applied = writeBack(request, read.chat, outcome, identity.clientSessionId, compaction !== undefined)
  const hideUsageChunk = format.adapter.requestUsage?.(applied.body) ?? false
  if (large && applied.changed) await yieldToOtherRequests()
  const requests = (state?.requests ?? 0) + 1
  await saveState(deps, identity.conversationKey, nextState(outcome.next, applied.tail, requests, now, kind), state)
  // The plan keeps room for the note before it goes in; calibration must compare what was really sent.
  const unsentNote = outcome.noteOn ? 0 : (input.note?.tokens ?? 0)
  const sentEstimate = outcome.report.estimatedAfter / factor - unsentNote
  const body = bodyToSend(request, read.chat, applied, hideUsageChunk)
  const sent = { sentEstimate, sized, planned: outcome.report.estimatedAfter, state, bytes: body.length }
  const prepared: Prepared = {
    body,
    headers: applied.headers,
    log,
    followUp: new RewriteFollowUp(request, read.chat, identity.limitScope, sent, prepareChat),
    hideUsageChunk,
    accounting:
      applied.breakpoints === undefined ? accounting : { ...accounting, breakpointsPlaced: applied.breakpoints },
  }
  return { kind: 'forward', prepared }
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
