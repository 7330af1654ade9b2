import { compactionRequestOf } from '../../model-call/compaction-request.ts'
import type { PrepareBody, PrepareResult } from '../../request/prepared.ts'
import type { WireFormat } from '../../providers/provider-contract.ts'
import { chatFormat } from '../../providers/registry.ts'
import { finishRewrite } from '../../rewrite/pipeline.ts'
import { promptTokens } from '../../rewrite/prompt-tokens.ts'
import { firstUserMessage, HoldoutArms } from '../../session/holdout-arm.ts'
import { prepareInWorker } from '../rewrite-workers/prepare-in-worker.ts'
import type { HookRequest, ReadChat, RewriteHookDeps } from './hook-request.ts'
import { decideCalibrated } from './calibrated-plan.ts'
import { prepareWith, type PlanInputs, type PlanStep, type PreparationSteps } from './prepare-with.ts'
import { readChat, yieldToOtherRequests } from './read-chat.ts'
import { referenceCount } from './reference-count.ts'
import { planAfterSending, plannableAfterSending } from './send-before-planning.ts'
import { bodyToSend } from './serialize.ts'
import { sentAsWritten, writeBack } from './write-back.ts'

export type { RewriteHookDeps } from './hook-request.ts'

/** The request side of the rewrite engine: parse, look up the conversation, plan, write back, remember. */
export function createRewriteHook(deps: RewriteHookDeps): (format: WireFormat) => PrepareBody | undefined {
  const withArms = { ...deps, arms: deps.arms ?? new HoldoutArms(deps.config.rewrite.holdout) }
  return (format) => {
    // Each rewritable wire format's adapter and usage reader come from the provider registry.
    const entry = chatFormat(format)
    if (!entry) return undefined
    return (body, incoming, options) =>
      prepareChat({
        deps: withArms,
        format: entry,
        wire: format,
        original: body,
        incoming,
        isRefit: false,
        recordsAfterDispatch: options?.recordsAfterDispatch === true,
      })
  }
}

/** A large body is read and planned in a worker thread, any other here; the rest of the preparation is the same. */
function prepareChat(request: HookRequest): Promise<PrepareResult> {
  const { deps } = request
  if (deps.workers && request.original.length >= deps.config.rewriteWorkers.aboveBytes)
    return prepareInWorker(request, deps.workers, prepareChat)
  return prepareWith(request, inlineSteps(request), prepareChat)
}

/** Reading and planning the body on this thread: the parsed body is kept between the two. */
function inlineSteps(request: HookRequest): PreparationSteps {
  let chat: ReadChat | undefined
  return {
    async read() {
      const read = await readChat(request)
      if (read.kind === 'untouched') return read
      chat = read.chat
      const { json, view } = read.chat
      const estimate = promptTokens(view)
      return {
        kind: 'chat',
        chat: read.chat,
        hints: request.format.adapter.sessionHints(json, view),
        promptTokens: estimate,
        referenceCount: referenceCount(read.chat, request.format.adapter, estimate),
        firstUser: () => firstUserMessage(json),
      }
    },
    plan: (inputs) => planHere(request, chat as ReadChat, inputs),
  }
}

async function planHere(request: HookRequest, chat: ReadChat, inputs: PlanInputs): Promise<PlanStep> {
  const { deps, format } = request
  const { scope, sized } = inputs
  const factorInputs = deps.calibration.factorInputs(chat.view.model, sized.key, scope)
  if (plannableAfterSending(request, chat, inputs, factorInputs)) {
    // Sized after dispatch as it would be now: other requests' answers may teach the calibration meanwhile.
    const limit = deps.calibration.limit(chat.view.model, scope)
    return { kind: 'as-sent', plan: () => planAfterSending(request, chat, inputs, limit, factorInputs) }
  }
  const { decided, factor, input } = decideCalibrated(request, chat, inputs, factorInputs)
  const planned = { factor, limits: input.limits, noteTokens: input.note?.tokens ?? 0 }
  if (decided.kind === 'too-long')
    return { ...planned, kind: 'too-long', outcome: decided, compaction: compactionRequestOf(chat.json) }
  // Sent as written even with the model's own minimum to cache, it is so whether or not it asks for
  // a summary (which only raises that minimum): the records find out which.
  const asSent = sentAsWritten(request, chat, decided, inputs.clientSessionId, false)
  const compactionOf = () => compactionRequestOf(chat.json)
  if (asSent) {
    const plan = { ...planned, decided, tail: asSent.tail, breakpoints: asSent.breakpoints, compactionOf }
    return { kind: 'as-sent', plan: () => plan }
  }
  const compaction = compactionOf()
  const asSentCompacting = compaction && sentAsWritten(request, chat, decided, inputs.clientSessionId, true)
  if (asSentCompacting) {
    const { tail, breakpoints } = asSentCompacting
    const plan = { ...planned, decided, tail, breakpoints, compactionOf: () => compaction }
    return { kind: 'as-sent', plan: () => plan }
  }
  const outcome = finishRewrite(decided)
  const applied = writeBack(request, chat, outcome, inputs.clientSessionId, compaction !== undefined)
  const hideUsageChunk = format.adapter.requestUsage?.(applied.body) ?? false
  if (chat.large && applied.changed) await yieldToOtherRequests()
  const written = {
    body: () => bodyToSend(request, chat, applied, hideUsageChunk),
    headers: applied.headers,
    tail: applied.tail,
    breakpoints: applied.breakpoints,
    promisedResult: applied.promisedResult,
    hideUsageChunk,
  }
  return { ...planned, kind: 'written', outcome, written, compaction }
}
