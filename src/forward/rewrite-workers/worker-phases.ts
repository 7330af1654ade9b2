import { CalibrationSnapshot } from '../../calibration/calibration-snapshot.ts'
import { compactionRequestOf } from '../../model-call/compaction-request.ts'
import { chatFormat } from '../../providers/registry.ts'
import { finishRewrite } from '../../rewrite/pipeline.ts'
import { promptTokens } from '../../rewrite/prompt-tokens.ts'
import { firstUserMessage } from '../../session/holdout-arm.ts'
import type { Json } from '../../util/json.ts'
import { decideCalibrated } from '../rewrite-hook/calibrated-plan.ts'
import type { HookRequest, ReadChat, RewriteHookDeps } from '../rewrite-hook/hook-request.ts'
import { readChat } from '../rewrite-hook/read-chat.ts'
import { bodyToSend } from '../rewrite-hook/serialize.ts'
import { writeBack } from '../rewrite-hook/write-back.ts'
import type { PlanJob, PlanReply, ReadJob, ReadReply } from './protocol.ts'

/** A body a worker has read and keeps, parsed, until the main thread asks for its plan. */
export interface HeldChat {
  readonly request: HookRequest
  readonly chat: ReadChat
}

/** Top-level fields no larger than this (in JSON) go back in the summary: the model, limits, flags, diagnostics. */
const summaryFieldChars = 4_096

/** Parses and views the body, exactly as the main thread's hook does (the same functions). */
export async function readPhase(deps: RewriteHookDeps, job: ReadJob): Promise<{ reply: ReadReply; held?: HeldChat }> {
  const format = chatFormat(job.format)
  if (!format) throw new Error(`no chat format ${job.format}`)
  const original = Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength)
  const request: HookRequest = { deps, format, wire: job.format, original, incoming: job.headers, isRefit: false }
  const read = await readChat(request)
  if (read.kind === 'untouched') {
    const model = read.result.kind === 'forward' ? (read.result.prepared.accounting?.model ?? 'unknown') : 'unknown'
    return { reply: { kind: 'untouched', reason: read.reason, model, summary: read.json && summaryOf(read.json) } }
  }
  const { json, view } = read.chat
  const reply: ReadReply = {
    kind: 'chat',
    model: view.model,
    maxOutputTokens: view.maxOutputTokens,
    serverManaged: view.serverManaged,
    hints: format.adapter.sessionHints(json, view),
    promptTokens: promptTokens(view),
    firstUserMessage: deps.config.rewrite.holdout > 0 ? firstUserMessage(json) : '',
    summary: summaryOf(json),
  }
  return { reply, held: { request, chat: read.chat } }
}

/** Plans, writes back and serializes the held body with the state the main thread read for it. */
export function planPhase(held: HeldChat, job: PlanJob): PlanReply {
  const request: HookRequest = {
    ...held.request,
    deps: { ...held.request.deps, calibration: new CalibrationSnapshot(job.rememberedLimit, job.factorInputs) },
    ...(job.toldLimit === undefined ? {} : { toldLimit: job.toldLimit }),
  }
  const { chat } = held
  // The same decision the main thread makes (calibrated-plan.ts), sized by the snapshot the job carries.
  const { decided, factor, input } = decideCalibrated(request, chat, job, job.factorInputs)
  const outcome = finishRewrite(decided)
  const compaction = compactionRequestOf(chat.json)
  const planned = { factor, limits: input.limits, noteTokens: input.note?.tokens ?? 0, compaction }
  if (outcome.kind === 'too-long') return { ...planned, outcome }
  const applied = writeBack(request, chat, outcome, job.clientSessionId, compaction !== undefined)
  const hideUsageChunk = request.format.adapter.requestUsage?.(applied.body) ?? false
  const body = bodyToSend(request, chat, applied, hideUsageChunk)
  const { edits: _edits, ...facts } = outcome
  return {
    ...planned,
    outcome: facts,
    body: body === request.original ? undefined : body,
    headers: applied.headers,
    tail: applied.tail,
    changed: applied.changed,
    breakpoints: applied.breakpoints,
    promisedResult: applied.promisedResult,
    hideUsageChunk,
  }
}

/** The body's small top-level fields: what usage readers (e.g. `diagnostics`) and refusals (the output field) read. */
function summaryOf(json: Json): Json {
  const summary: Json = {}
  for (const [key, value] of Object.entries(json)) {
    if (isSmall(value)) summary[key] = value
  }
  return summary
}

/** Long lists (the messages, the tools) are left out without serializing them. */
function isSmall(value: unknown): boolean {
  if (typeof value === 'string') return value.length <= summaryFieldChars
  if (Array.isArray(value) && value.length > 64) return false
  return (JSON.stringify(value)?.length ?? 0) <= summaryFieldChars
}
