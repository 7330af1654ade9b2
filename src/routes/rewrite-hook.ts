import { isUtf8 } from 'node:buffer'
import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from 'pino'
import { limitsFor, promptBudget } from '../config/model-limits.ts'
import type { Config } from '../config/schema.ts'
import { CtxgateError } from '../errors.ts'
import { promptTokensOf, type UsageReader } from '../model-call/usage.ts'
import { NotAChatRequest, type ChatAdapter } from '../providers/adapter-contract.ts'
import type { WireFormat } from '../providers/provider-contract.ts'
import { chatFormat } from '../providers/registry.ts'
import type { Calibration } from '../rewrite/calibration.ts'
import type { TokenEstimator } from '../rewrite/estimate.ts'
import { systemNote } from '../rewrite/notes.ts'
import { planRewrite } from '../rewrite/plan.ts'
import { hashText } from '../rewrite/hash.ts'
import { noDecisions, type ChatView, type RewriteReport } from '../rewrite/types.ts'
import { identify } from '../session/identity.ts'
import type { ConversationState, SessionStore } from '../session/session-store.ts'
import type { PrepareBody, PrepareResult, Prepared } from '../model-call/prepared.ts'
import { isJsonObject } from '../util/json.ts'

export interface RewriteHookDeps {
  readonly config: Readonly<Config>
  readonly store: SessionStore
  readonly calibration: Calibration
  readonly estimator: TokenEstimator
  readonly logger: Logger
  readonly now?: () => number
}

/** The note as it appears inside a JSON string, to tell whether a body already carries it. */
const noteBytes = Buffer.from(JSON.stringify(systemNote).slice(1, -1))

/** The request side of the rewrite engine: parse, look up the conversation, plan, write back, remember. */
export function createRewriteHook(deps: RewriteHookDeps): (format: WireFormat) => PrepareBody | undefined {
  return (format) => {
    // Each rewritable wire format's adapter and usage reader come from the provider registry.
    const entry = chatFormat(format)
    if (!entry) return undefined
    return (body, incoming) => prepareChat(deps, entry.adapter, entry.usage, body, incoming, false)
  }
}

async function prepareChat(
  deps: RewriteHookDeps,
  adapter: ChatAdapter,
  usage: () => UsageReader,
  original: Buffer,
  incoming: IncomingHttpHeaders,
  isRefit: boolean,
): Promise<PrepareResult> {
  // Invalid UTF-8 would come back from a parse and re-serialize as U+FFFD: never rewrite what cannot round-trip.
  const decodable = isUtf8(original)
  let json: unknown
  try {
    json = decodable ? JSON.parse(original.toString('utf8')) : undefined
  } catch {
    json = undefined
  }
  const model = isJsonObject(json) && typeof json['model'] === 'string' ? json['model'] : 'unknown'
  const large = original.length > yieldAboveBytes
  if (large) await yieldToOtherRequests()
  // Sent as is, but still read for usage and counted under its model.
  const untouched = (reason: string): PrepareResult => ({
    kind: 'forward',
    prepared: {
      body: original,
      usageReader: usage,
      log: { rewrite: reason },
      accounting: { model, refusalAvoided: false },
    },
  })
  if (!decodable) return untouched('invalid-utf8')
  if (!isJsonObject(json)) return untouched('not-json')
  if (!deps.config.rewrite.enabled) return untouched('disabled')
  if (headerValue(incoming, 'x-ctxgate-mode') === 'passthrough') return untouched('passthrough')
  let view
  try {
    view = adapter.view(json, deps.estimator)
  } catch (error) {
    if (error instanceof NotAChatRequest) return untouched('not-a-chat-request')
    throw error
  }
  const limits = limitsFor(deps.config, view.model)
  if (!limits) return untouched('no-model-limits')
  if (large) await yieldToOtherRequests()
  await refreshCalibration(deps, view.model)

  const headerBudget = parseBudget(headerValue(incoming, 'x-ctxgate-budget'))
  // Once the upstream has named its real limit, it wins over configuration (a window set too large).
  const configured = promptBudget(limits, view.maxOutputTokens, headerBudget)
  const learnedLimit = deps.calibration.limit(view.model)
  const budget =
    learnedLimit === undefined ? configured : Math.min(configured, learnedLimit * 0.97 - view.maxOutputTokens)
  const identity = identify(incoming, adapter.sessionHints(json, view))
  const state = await loadState(deps, identity.conversationKey)
  const note = deps.config.rewrite.systemNote ? systemNote : undefined
  // Counted before it is added, so adding it never breaks the budget; not twice when already there.
  // (Counted as one more text block: the same as the view counts it once written.)
  const noteTokens = note && original.indexOf(noteBytes) === -1 ? deps.estimator.text(note) + 3 : 0
  const factor = deps.calibration.factor(view.model)
  const planned = planRewrite({
    view: { ...view, headTokens: view.headTokens + noteTokens },
    decisions: state?.decisions ?? noDecisions,
    budget,
    policy: deps.config.rewrite,
    factor,
    estimator: deps.estimator,
  })
  const log = { session: identity.sessionId, turn: (state?.requests ?? 0) + 1, rewrite: planned.report }
  const report = planned.report
  const refusalAvoided = report.estimatedBefore + view.maxOutputTokens > limits.window
  if (planned.kind === 'too-long')
    return {
      kind: 'reject',
      error: new CtxgateError('CTXGATE_CONTEXT_TOO_LONG', planned.message),
      log,
      accounting: { model: view.model, sessionId: identity.sessionId, report, refusalAvoided: false },
    }

  // The note goes in with the first edit and stays: a conversation that never needs editing pays nothing for it.
  const noteOn =
    note !== undefined && (state?.noteOn === true || report.folded + report.cleared + report.droppedMessages > 0)
  const prefixBreak = detectPrefixBreak(state, view, report, noteOn)
  const applied = adapter.apply(json, view, {
    edits: planned.edits,
    ...(noteOn ? { systemNote: note } : {}),
    sessionId: identity.sessionId,
    // After a new cut the old tail position means nothing.
    ...(state?.previousTail !== undefined && !(planned.report.newBatch && planned.report.droppedMessages > 0)
      ? { previousTail: state.previousTail }
      : {}),
    minCacheableTokens: limits.minCacheableTokens,
    thinkingBound: limits.thinkingBoundToPrefix,
    firstEditedMessage: planned.report.firstEditedMessage,
    estimator: deps.estimator,
  })
  const hideUsageChunk = adapter.requestUsage?.(applied.body) ?? false
  if (large && applied.changed) await yieldToOtherRequests()
  const next: ConversationState = {
    decisions: planned.decisions,
    previousTail: applied.tail,
    requests: (state?.requests ?? 0) + 1,
    lastSeen: (deps.now ?? Date.now)(),
    noteOn,
    messageCount: view.messages.length,
    prefixSignature: signature(view, view.messages.length),
  }
  await saveState(deps, identity.conversationKey, next)

  const sentEstimate = planned.report.estimatedAfter / factor
  const prepared: Prepared = {
    // Nothing to change: the client's own bytes go on, and the serialize is skipped.
    body: applied.changed || hideUsageChunk ? Buffer.from(JSON.stringify(applied.body)) : original,
    headers: applied.headers,
    log,
    usageReader: usage,
    hideUsageChunk,
    accounting: {
      model: view.model,
      sessionId: identity.sessionId,
      report,
      refusalAvoided,
      ...(prefixBreak ? { prefixBreak } : {}),
    },
    onUsage: (reported) =>
      deps.calibration.record(view.model, sentEstimate, promptTokensOf(reported)).catch(() => undefined),
    // Told the real size, re-plan once with the measured ratio: a new, smaller request, not a retry.
    ...(!isRefit
      ? {
          refit: async (actualTokens: number, limit: number | undefined) => {
            await deps.calibration.record(view.model, sentEstimate, actualTokens).catch(() => undefined)
            if (limit !== undefined) await deps.calibration.recordLimit(view.model, limit).catch(() => undefined)
            const again = await prepareChat(deps, adapter, usage, original, incoming, true)
            return again.kind === 'forward'
              ? { ...again.prepared, log: { ...again.prepared.log, refit: true } }
              : undefined
          },
        }
      : {}),
  }
  return { kind: 'forward', prepared }
}

/** Bodies this large take milliseconds per phase (parse, view, serialize): other streams get the event loop between phases. */
const yieldAboveBytes = 256 * 1024

function yieldToOtherRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * Whether this request's prefix fails to extend the previous one of the conversation: the client
 * rewrote its history (fewer messages, different ones, a result ctxgate had frozen), or ctxgate
 * started a new batch of edits inside what was sent before.
 */
function detectPrefixBreak(
  state: ConversationState | undefined,
  view: ChatView,
  report: RewriteReport,
  noteOn: boolean,
): 'client_edit' | 'ctxgate_batch' | undefined {
  if (!state || state.messageCount === undefined) return undefined
  if (
    report.clientEdited ||
    view.messages.length < state.messageCount ||
    signature(view, state.messageCount) !== state.prefixSignature
  )
    return 'client_edit'
  if ((report.firstNewEdit >= 0 && report.firstNewEdit < state.messageCount) || (noteOn && state.noteOn !== true))
    return 'ctxgate_batch'
  return undefined
}

/** Role and estimated size of each of the first `count` messages: cheap, and changes when their content does. */
function signature(view: ChatView, count: number): string {
  let text = ''
  for (let index = 0; index < count; index++) {
    const message = view.messages[index]
    text += `${message?.role}:${message?.tokens};`
  }
  return hashText(text)
}

async function refreshCalibration(deps: RewriteHookDeps, model: string): Promise<void> {
  try {
    await deps.calibration.refresh(model)
  } catch {
    // The shared store is down: plan with what this replica knows.
  }
}

async function loadState(deps: RewriteHookDeps, key: string): Promise<ConversationState | undefined> {
  try {
    return await deps.store.get(key)
  } catch (error) {
    deps.logger.warn(
      { store: deps.store.kind, error: (error as Error).message },
      'session store read failed; rewriting without frozen decisions',
    )
    return undefined
  }
}

async function saveState(deps: RewriteHookDeps, key: string, state: ConversationState): Promise<void> {
  try {
    await deps.store.set(key, state)
  } catch (error) {
    deps.logger.warn({ store: deps.store.kind, error: (error as Error).message }, 'session store write failed')
  }
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

function parseBudget(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const value = Number(raw)
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined
}
