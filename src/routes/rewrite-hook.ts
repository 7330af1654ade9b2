import type { Refetch } from '../rewrite/refetch.ts'
import { isUtf8 } from 'node:buffer'
import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from 'pino'
import { configuredBudget, limitsFor, promptBudget } from '../config/model-limits.ts'
import type { Config, ModelLimits } from '../config/schema.ts'
import { CtxgateError } from '../errors.ts'
import { compactionRequestOf, type CompactingClient } from '../model-call/compaction-request.ts'
import { promptTokensOf } from '../model-call/usage.ts'
import { NotAChatRequest, type Applied, type ChatAdapter } from '../providers/adapter-contract.ts'
import type { ChatFormat, WireFormat } from '../providers/provider-contract.ts'
import { chatFormat } from '../providers/registry.ts'
import { limitFloorShare, type Calibration, type ConversationRequest } from '../rewrite/calibration.ts'
import type { TokenEstimator } from '../rewrite/estimate.ts'
import { systemNote } from '../rewrite/notes.ts'
import type { EditPointPrices } from '../rewrite/economy/edit-point.ts'
import { summarizeLedger } from '../rewrite/economy/ledger.ts'
import { pricesFor, writePrice, type ModelPrices } from '../rewrite/economy/prices.ts'
import type { EconomySettings } from '../rewrite/economy/request-decision.ts'
import { defaultEconomyPolicy } from '../rewrite/economy/types.ts'
import { runPipeline, type NextMemory, type PipelineInput, type PipelineOutcome } from '../rewrite/pipeline.ts'
import type { ChatView } from '../rewrite/types.ts'
import { identify } from '../session/identity.ts'
import { sessionKind } from '../session/session-kind.ts'
import { clientFamily } from '../live/client-family.ts'
import { clientRuleOf } from '../session/client-rule.ts'
import { explainPromptRoom } from './refusal-explanation.ts'
import { firstUserMessage, HoldoutArms, type Arm } from '../session/holdout-arm.ts'
import type { ConversationState, SessionStore } from '../session/session-store.ts'
import type { Accounting, PrepareBody, PrepareResult, Prepared } from '../model-call/prepared.ts'
import { parseKeepingNumbers, type ParsedKeepingNumbers } from '../util/exact-numbers.ts'
import { firstHeader } from '../util/headers.ts'
import { addJsonFields, fieldsAddedOnly } from '../util/add-json-fields.ts'
import { spliceJsonBytes } from '../util/splice-json.ts'
import { isJsonObject, type Json } from '../util/json.ts'

export interface RewriteHookDeps {
  readonly config: Readonly<Config>
  readonly store: SessionStore
  readonly calibration: Calibration
  readonly estimator: TokenEstimator
  readonly logger: Logger
  readonly now?: () => number
  /** Sessions' holdout arms; one per hook unless a test shares it. */
  readonly arms?: HoldoutArms
}

/** The request side of the rewrite engine: parse, look up the conversation, plan, write back, remember. */
export function createRewriteHook(deps: RewriteHookDeps): (format: WireFormat) => PrepareBody | undefined {
  const withArms = { ...deps, arms: deps.arms ?? new HoldoutArms(deps.config.rewrite.holdout) }
  return (format) => {
    // Each rewritable wire format's adapter and usage reader come from the provider registry.
    const entry = chatFormat(format)
    if (!entry) return undefined
    return (body, incoming) => prepareChat({ deps: withArms, format: entry, original: body, incoming, isRefit: false })
  }
}

type FormatEntry = ChatFormat

/** One request through the hook; a refit is the same request planned again with what the upstream said. */
interface HookRequest {
  readonly deps: RewriteHookDeps
  readonly format: FormatEntry
  readonly original: Buffer
  readonly incoming: IncomingHttpHeaders
  readonly isRefit: boolean
  /** On a refit: the limit the upstream just named, planned with for this one request. */
  readonly toldLimit?: number
  /** On a refit: the conversation as it was before the refused request, which does not count as a turn. */
  readonly memoryBefore?: { readonly state: ConversationState | undefined }
}

/** A chat request this hook can rewrite, parsed and viewed. */
interface ReadChat {
  readonly json: Json
  readonly view: ChatView
  readonly limits: ModelLimits
  readonly large: boolean
  /** Counts this request's text: exactly where the model's tokenizer is public, else the estimate. */
  readonly estimator: TokenEstimator
  /** Puts back number literals a double could not hold (see util/exact-numbers.ts). */
  readonly restoreNumbers: (serialized: string) => string
  /** The body as the client wrote it, decoded. */
  readonly text: string
}

async function prepareChat(request: HookRequest): Promise<PrepareResult> {
  const { deps, format, incoming } = request
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
  const sized = { key: identity.conversationKey, unedited: uneditedEstimate(view) }
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
    return {
      kind: 'reject',
      error: tooLong(format, outcome, explainPromptRoom(promptRoom(request, read.chat, input.limits, outcome))),
      log,
      accounting,
    }
  const applied = writeBack(request, read.chat, outcome, identity.clientSessionId, compaction !== undefined)
  const hideUsageChunk = format.adapter.requestUsage?.(applied.body) ?? false
  if (large && applied.changed) await yieldToOtherRequests()
  const requests = (state?.requests ?? 0) + 1
  await saveState(deps, identity.conversationKey, nextState(outcome.next, applied.tail, requests, now, kind), state)
  // The plan keeps room for the note before it goes in; calibration must compare what was really sent.
  const unsentNote = outcome.noteOn ? 0 : (input.note?.tokens ?? 0)
  const sentEstimate = outcome.report.estimatedAfter / factor - unsentNote
  const body = bodyToSend(request, read.chat, applied, hideUsageChunk)
  const prepared: Prepared = {
    body,
    headers: applied.headers,
    log,
    usageReader: () => format.usage({ body: json, headers: incoming }),
    hideUsageChunk,
    accounting:
      applied.breakpoints === undefined ? accounting : { ...accounting, breakpointsPlaced: applied.breakpoints },
    onUsage: (reported) =>
      deps.calibration
        .record(view.model, sentEstimate, promptTokensOf(reported), identity.limitScope, sized)
        .catch(() => undefined),
    // A server-managed request is never re-planned smaller: ctxgate makes no content edits to it.
    ...(request.isRefit || view.serverManaged
      ? {}
      : {
          refit: refitFor(request, read.chat, identity, {
            sentEstimate,
            sized,
            planned: outcome.report.estimatedAfter,
            state,
            bytes: body.length,
          }),
        }),
  }
  return { kind: 'forward', prepared }
}

/**
 * The client's own bytes when nothing changed; else its bytes with only what ctxgate changed written
 * in (a breakpoint is its `cache_control` field, a cleared result its new content), so numbers keep
 * the digits the client wrote, escapes and duplicate keys stay. An adapter that cannot promise
 * shared unchanged parts gets its added top-level fields spliced in, or a serialization of the body.
 */
function bodyToSend(request: HookRequest, chat: ReadChat, applied: Applied, hideUsageChunk: boolean): Buffer {
  const { original, format } = request
  if (!applied.changed && !hideUsageChunk) return original
  const serialize = (value: unknown): string => chat.restoreNumbers(JSON.stringify(value))
  if (format.adapter.copiesOnWrite === true)
    return spliceJsonBytes(original, chat.text, chat.json, applied.body, serialize)
  const added = fieldsAddedOnly(chat.json, applied.body)
  return added ? addJsonFields(original, added) : Buffer.from(serialize(applied.body))
}

/** ctxgate's own refusal: the provider's own opening words first (clients recover on them), then why. */
function tooLong(format: FormatEntry, outcome: TooLong, arithmetic: string): CtxgateError {
  const { estimatedBefore, budget } = outcome.report
  return new CtxgateError(
    'CTXGATE_CONTEXT_TOO_LONG',
    `${format.tooLongWording(estimatedBefore, budget)} ${outcome.message} ${arithmetic}`,
  )
}

type TooLong = Extract<PipelineOutcome, { kind: 'too-long' }>

/** The numbers a refused request was planned with, for the refusal's own explanation. */
function promptRoom(request: HookRequest, chat: ReadChat, limits: PipelineInput['limits'], outcome: TooLong) {
  const { json, view } = chat
  const headerBudget = parseBudget(firstHeader(request.incoming['x-ctxgate-budget']))
  const outputField =
    ['max_output_tokens', 'max_completion_tokens', 'max_tokens'].find((field) => isJsonObject(json) && field in json) ??
    'max_tokens'
  return {
    window: limits.window,
    maxOutputTokens: view.maxOutputTokens,
    configuredBudget: configuredBudget(chat.limits),
    ...(headerBudget === undefined ? {} : { headerBudget }),
    ...(limits.learnedLimit === undefined ? {} : { learnedLimit: limits.learnedLimit }),
    budget: outcome.report.budget,
    client: clientFamily(firstHeader(request.incoming['user-agent'])),
    outputField,
  }
}

// Both records are written out whole: `{ ...record, more }` made a new hidden class per request on Node 20 (GC time).

/** What the request's metrics, session totals and live page count (refusalAvoided only once served). */
function accountingFor(
  model: string,
  session: SessionArm,
  outcome: PipelineOutcome,
  clientCompaction: CompactingClient | undefined,
): Accounting {
  const rewritten = outcome.kind === 'rewritten' ? outcome : undefined
  return {
    model,
    sessionId: session.sessionId,
    arm: session.arm,
    clientCompacted: session.clientCompacted,
    ...(session.kind === undefined ? {} : { kind: session.kind }),
    ...(session.client ? { client: session.client } : {}),
    report: outcome.report,
    refusalAvoided: rewritten?.refusalAvoided ?? false,
    ...(clientCompaction ? { clientCompaction } : {}),
    ...(rewritten?.prefixBreak ? { prefixBreak: rewritten.prefixBreak } : {}),
    ...(rewritten?.batch ? { batchReason: rewritten.batch.reason } : {}),
    ...(rewritten && rewritten.refetches.length > 0 ? { refetches: rewritten.refetches } : {}),
    ...ledgerAccounting(rewritten),
  }
}

/** The regret ledger's part of the accounting: an economy batch's prediction, and reads spared by earlier ones. */
function ledgerAccounting(rewritten: Rewritten | undefined): Pick<Accounting, 'ledgerBatch' | 'ledgerSaved'> {
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
function requestLog(
  session: string,
  turn: number,
  outcome: PipelineOutcome,
  compaction: CompactingClient | undefined,
): Record<string, unknown> {
  return { session, turn, ...economyLog(outcome), ...(compaction ? { clientCompaction: compaction } : {}) }
}

/** The session's holdout arm (drawn once per session) and the client whose own compaction rule ctxgate knows. */
function sessionArmOf(request: HookRequest, chat: ReadChat, sessionId: string, kind: string | undefined): SessionArm {
  const { json, view } = chat
  const mark = request.deps.arms?.see(
    sessionId,
    () => ({ kind: kind ?? `unknown\u0000${view.model}`, firstUserMessage: firstUserMessage(json) }),
    uneditedEstimate(view),
  ) ?? { arm: 'treated' as const, clientCompacted: false }
  const rule = clientRuleOf(clientFamily(firstHeader(request.incoming['user-agent'])))
  const client = rule && { rule: rule.name, window: chat.limits.window, maxOutputTokens: view.maxOutputTokens }
  return { sessionId, arm: mark.arm, clientCompacted: mark.clientCompacted, kind, client }
}

/** Who the request belongs to and which arm of the holdout that session is in. */
interface SessionArm {
  readonly sessionId: string
  readonly arm: Arm
  readonly clientCompacted: boolean
  readonly kind: string | undefined
  readonly client: Accounting['client']
}

/**
 * A control session's request: the client's own bytes and headers, nothing added (no edits, no
 * markers, no cache key, no usage option), metered like any other. No refit: it is not helped.
 */
function controlForward(request: HookRequest, chat: ReadChat, session: SessionArm): PrepareResult {
  const { format, incoming } = request
  const accounting: Accounting = {
    model: chat.view.model,
    sessionId: session.sessionId,
    arm: 'control',
    clientCompacted: session.clientCompacted,
    ...(session.kind === undefined ? {} : { kind: session.kind }),
    refusalAvoided: false,
  }
  return {
    kind: 'forward',
    prepared: {
      body: request.original,
      usageReader: () => format.usage({ body: chat.json, headers: incoming }),
      log: { session: session.sessionId, rewrite: 'holdout', arm: 'control' },
      accounting,
    },
  }
}

/** What the conversation keeps for its next request. */
function nextState(
  next: NextMemory,
  previousTail: number | undefined,
  requests: number,
  lastSeen: number,
  kind: string | undefined,
): ConversationState {
  return Object.assign({}, next, { previousTail, requests, lastSeen, kind })
}

/** The window, the budget (lowered by the header) and what the upstream said its limit is. */
function budgetLimits(request: HookRequest, chat: ReadChat, scope: string): PipelineInput['limits'] {
  const { view, limits } = chat
  const headerBudget = parseBudget(firstHeader(request.incoming['x-ctxgate-budget']))
  // A refit plans with the limit the upstream just named; what is remembered for later requests is bounded.
  const remembered = withinLimitBounds(request.deps.calibration.limit(view.model, scope), limits.window)
  const told = request.toldLimit
  const learnedLimit = told === undefined ? remembered : Math.min(told, remembered ?? told)
  // The client asked the server to manage the context: no content edits of ctxgate's own, only breakpoints.
  if (view.serverManaged) return { window: limits.window, budget: Number.POSITIVE_INFINITY }
  return {
    window: limits.window,
    budget: promptBudget(limits, view.maxOutputTokens, headerBudget),
    ...(learnedLimit === undefined ? {} : { learnedLimit }),
  }
}

/**
 * A remembered limit as recordLimit bounds one (between half the window and the window): one read
 * from a shared store may have been written by anyone, and a limit of 1 would refuse every request.
 */
function withinLimitBounds(limit: number | undefined, window: number): number | undefined {
  if (limit === undefined || !Number.isFinite(limit) || limit >= window) return undefined
  return Math.max(Math.floor(window * limitFloorShare), Math.floor(limit))
}

/** A plan re-run at most twice is enough: the factor only rises, towards the prior's. */
const maxReplans = 2

/**
 * Plans with the calibration factor, then, when the plan made a new batch, again with the factor
 * for what is left after it: the batch takes out old content only, so the new content, sized with
 * a larger factor, is a larger share of what is sent.
 */
export function planCalibrated(
  plan: (factor: number) => PipelineOutcome,
  factorFor: (after: { sentAfterEdits: number } | undefined) => number,
): { outcome: PipelineOutcome; factor: number } {
  let factor = factorFor(undefined)
  let outcome = plan(factor)
  for (let replan = 0; replan < maxReplans && outcome.kind === 'rewritten' && outcome.report.newBatch; replan++) {
    const settled = factorFor({ sentAfterEdits: outcome.report.estimatedAfter / factor })
    if (settled <= factor) break
    factor = settled
    outcome = plan(factor)
  }
  return { outcome, factor }
}

/**
 * The planned edits, the note and the cache breakpoints, written into the client's body by its adapter.
 * A client's compaction request gets no marker of ctxgate's: its answer starts a new history, so an
 * entry written at its end is never read (docs/dead-writes.md).
 */
function writeBack(
  request: HookRequest,
  chat: ReadChat,
  outcome: Rewritten,
  sessionId: string,
  clientCompaction: boolean,
): Applied {
  const { json, view, limits } = chat
  return request.format.adapter.apply(json, view, {
    edits: outcome.edits,
    ...(outcome.noteOn
      ? { systemNote, systemNoteAt: notePlacement(request.deps.config, request.format.adapter).at }
      : {}),
    sessionId,
    ...(outcome.previousTail !== undefined ? { previousTail: outcome.previousTail } : {}),
    ...(outcome.nextEditResult !== undefined ? { nextEditResult: outcome.nextEditResult } : {}),
    ...(outcome.followingEditResult !== undefined ? { followingEditResult: outcome.followingEditResult } : {}),
    minCacheableTokens: clientCompaction ? Number.POSITIVE_INFINITY : limits.minCacheableTokens,
    thinkingBound: limits.thinkingBoundToPrefix,
    firstEditedMessage: outcome.report.firstEditedMessage,
    estimator: chat.estimator,
    ...(outcome.stableTtl === '1h' ? { stableTtl: '1h' as const } : {}),
  })
}

/** What the pipeline needs besides the conversation's memory, the calibration factor and the clock. */
function pipelineInput(
  request: HookRequest,
  chat: ReadChat,
  scope: string,
): Omit<PipelineInput, 'memory' | 'factor' | 'now'> {
  const { deps, format } = request
  const note = deps.config.rewrite.systemNote ? systemNote : undefined
  const placement = notePlacement(deps.config, format.adapter)
  const prices = pricesFor(deps.config.economy.prices, chat.view.model)
  return {
    view: chat.view,
    limits: budgetLimits(request, chat, scope),
    policy: deps.config.rewrite,
    estimator: chat.estimator,
    note:
      note === undefined
        ? undefined
        : { text: note, tokens: systemNoteTokens(format.adapter, chat, note, placement.at), ...placement },
    ...economyOf(deps.config, prices),
    reachBack: reachBackOf(prices),
  }
}

/** Where and from when the note goes: `auto` puts it at the edit point where the wire format allows a message there. */
function notePlacement(
  config: Readonly<Config>,
  adapter: ChatAdapter,
): { readonly at: 'head' | 'edit-point'; readonly from: 'first-edit' | 'first-request' } {
  const setting = config.rewrite.systemNotePlacement
  if (setting === 'first-request') return { at: 'head', from: 'first-request' }
  return { at: setting === 'auto' && adapter.noteAtEditPoint === true ? 'edit-point' : 'head', from: 'first-edit' }
}

/** The report for the log line and accounting, with the new batch's reason (and, for the log, why none was made). */
function economyLog(outcome: PipelineOutcome) {
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

/** The cache-priced economy's prices and policy for this model; nothing under `budget-only`. */
function economyOf(config: Readonly<Config>, prices: ModelPrices): { economy?: EconomySettings } {
  if (config.rewrite.economy !== 'cache-priced') return {}
  const { startTokens, keepRecentRounds, excludeTools, shortSessionRequests, maxNeedHazard, forecastQuantile } =
    config.economy
  const policy = {
    ...defaultEconomyPolicy,
    startTokens,
    keepRecentRounds,
    excludeTools,
    shortSessionRequests,
    maxNeedHazard,
    forecastQuantile,
  }
  return { economy: { prices, policy: { ...policy, lowWater: config.rewrite.lowWater } } }
}

/**
 * Prices for whether a batch reaches back to a small old result, whatever the strategy: the model's
 * read and 5-minute write prices over the longest horizon the economy prices, so only a result that
 * could never pay for the rewrite it causes is left whole, and the verdict does not drift as a session grows.
 */
function reachBackOf(prices: ModelPrices): EditPointPrices {
  return { read: prices.cacheRead, write: writePrice(prices, '5m'), requestsAhead: defaultEconomyPolicy.horizonCap }
}

/** The client's whole prompt as estimated, before edits and without any factor. */
function uneditedEstimate(view: ChatView): number {
  return view.messages.reduce((sum, message) => sum + message.tokens, view.headTokens)
}

type Rewritten = Extract<PipelineOutcome, { kind: 'rewritten' }>

/** Share of ctxgate's estimate of a refused request taken as the limit when the refusal names none. */
const unnamedLimitShare = 0.9

/**
 * Refused for length, re-plan once: with the measured ratio and the named limit when the upstream
 * gave them, else below the estimate of what was refused (it was over the limit, whatever the limit
 * is). A new, smaller request, not a retry.
 */
function refitFor(
  request: HookRequest,
  chat: ReadChat,
  identity: { readonly limitScope: string; readonly conversationKey: string },
  sent: {
    readonly sentEstimate: number
    readonly sized: ConversationRequest
    readonly planned: number
    readonly state: ConversationState | undefined
    /** Size of the refused body: a refit is only worth sending when it is strictly smaller. */
    readonly bytes: number
  },
): NonNullable<Prepared['refit']> {
  const { calibration } = request.deps
  const model = chat.view.model
  const scope = identity.limitScope
  return async ({ actualTokens, limit: named }) => {
    if (actualTokens !== undefined)
      await calibration.record(model, sent.sentEstimate, actualTokens, scope, sent.sized).catch(() => undefined)
    const limit = named ?? (actualTokens === undefined ? Math.floor(sent.planned * unnamedLimitShare) : undefined)
    if (limit !== undefined)
      await calibration.recordLimit(model, limit, scope, chat.limits.window).catch(() => undefined)
    const again = await prepareChat({
      ...request,
      isRefit: true,
      memoryBefore: { state: sent.state },
      ...(limit === undefined ? {} : { toldLimit: limit }),
    })
    // A refit no smaller than what was refused (a lying refusal, or nothing left to take out) would be
    // refused again, or be larger: the client gets the upstream's refusal instead.
    if (again.kind !== 'forward' || again.prepared.body.length >= sent.bytes) return undefined
    return { ...again.prepared, log: { ...again.prepared.log, refit: true } }
  }
}

/** Parse and view the body, or say why it goes on as sent (still read for usage and counted under its model). */
async function readChat(
  request: HookRequest,
): Promise<{ kind: 'untouched'; result: PrepareResult } | { kind: 'chat'; chat: ReadChat }> {
  const { deps, format, original, incoming } = request
  // Invalid UTF-8 would come back from a parse and re-serialize as U+FFFD: never rewrite what cannot round-trip.
  const decodable = isUtf8(original)
  const parsed = decodable ? parseJson(original) : undefined
  const json = parsed?.value
  const model = isJsonObject(json) && typeof json['model'] === 'string' ? json['model'] : 'unknown'
  const large = original.length > yieldAboveBytes
  if (large) await yieldToOtherRequests()
  const untouched = (reason: string) => ({
    kind: 'untouched' as const,
    result: {
      kind: 'forward' as const,
      prepared: {
        body: original,
        usageReader: isJsonObject(json) ? () => format.usage({ body: json, headers: incoming }) : format.usage,
        log: { rewrite: reason },
        accounting: { model, refusalAvoided: false },
      },
    },
  })
  if (!decodable) return untouched('invalid-utf8')
  if (!isJsonObject(json)) return untouched('not-json')
  if (!deps.config.rewrite.enabled) return untouched('disabled')
  if (firstHeader(incoming['x-ctxgate-mode'])?.trim().toLowerCase() === 'passthrough') return untouched('passthrough')
  // The first request for a model with a public tokenizer waits for it to load, once per process.
  await deps.estimator.ready(model)
  const estimator = deps.estimator.forModel(model)
  let view: ChatView
  try {
    view = format.adapter.view(json, estimator)
  } catch (error) {
    if (error instanceof NotAChatRequest) return untouched('not-a-chat-request')
    throw error
  }
  const limits = limitsFor(deps.config, view.model)
  if (!limits) return untouched('no-model-limits')
  if (large) await yieldToOtherRequests()
  const text = parsed?.text ?? ''
  return {
    kind: 'chat',
    chat: { json, view, limits, large, estimator, restoreNumbers: parsed?.restore ?? String, text },
  }
}

function parseJson(original: Buffer): (ParsedKeepingNumbers & { readonly text: string }) | undefined {
  try {
    const text = original.toString('utf8')
    return { ...parseKeepingNumbers(text), text }
  } catch {
    return undefined
  }
}

/**
 * Tokens the system note adds, as the adapter writes it (a block, a message, a paragraph; a string
 * system prompt may become a list): measured on the request cut to its first message, so the planner
 * never undercounts it. 0 when the body already carries it.
 */
function systemNoteTokens(adapter: ChatAdapter, chat: ReadChat, note: string, at: 'head' | 'edit-point'): number {
  const { json, view, estimator } = chat
  const count = view.messages.length
  const probe = (withNote: string | undefined): ChatView =>
    adapter.view(
      adapter.apply(json, view, {
        edits: count > 1 ? [{ kind: 'drop-messages', from: 1, to: count, scope: 'turns', note: '' }] : [],
        ...(withNote === undefined ? {} : { systemNote: withNote, systemNoteAt: at }),
        sessionId: '',
        minCacheableTokens: Number.POSITIVE_INFINITY,
        thinkingBound: false,
        firstEditedMessage: count > 0 ? 0 : -1,
        estimator,
      }).body,
      estimator,
    )
  if (at === 'head') return Math.max(0, probe(note).headTokens - view.headTokens)
  // At the edit point the note is a message of its own: what it adds is the whole cut request's growth.
  return Math.max(0, viewTokens(probe(note)) - viewTokens(probe(undefined)))
}

function viewTokens(view: ChatView): number {
  return view.messages.reduce((sum, message) => sum + message.tokens, view.headTokens)
}

/** Bodies this large take milliseconds per phase (parse, view, serialize): other streams get the event loop between phases. */
const yieldAboveBytes = 256 * 1024

function yieldToOtherRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

async function refreshCalibration(
  deps: RewriteHookDeps,
  model: string,
  scope: string,
  conversation: string,
): Promise<void> {
  try {
    await deps.calibration.refresh(model, scope, conversation)
  } catch {
    // The shared store is down: plan with what this replica knows.
  }
}

/**
 * The conversation's state and, when the economy will price this request, how long finished
 * sessions of its kind ran: read side by side, so the second read adds no round trip's wait.
 */
async function loadConversation(
  request: HookRequest,
  chat: ReadChat,
  conversationKey: string,
  kind: string | undefined,
): Promise<{ state: ConversationState | undefined; finishedLengths: readonly number[] }> {
  const { deps, memoryBefore } = request
  const priced = deps.config.rewrite.economy === 'cache-priced' && chat.view.serverManaged !== true
  const [state, finishedLengths] = await Promise.all([
    memoryBefore ? memoryBefore.state : loadState(deps, conversationKey),
    priced && kind !== undefined ? loadFinishedLengths(deps, kind) : [],
  ])
  return { state, finishedLengths }
}

/** What the store kept of finished sessions of this kind; none when it cannot say (the session's own estimate then). */
async function loadFinishedLengths(deps: RewriteHookDeps, kind: string): Promise<readonly number[]> {
  try {
    return (await deps.store.finishedLengths?.(kind)) ?? []
  } catch {
    return []
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

async function saveState(
  deps: RewriteHookDeps,
  key: string,
  state: ConversationState,
  before: ConversationState | undefined,
): Promise<void> {
  try {
    await deps.store.set(key, state, before)
  } catch (error) {
    deps.logger.warn({ store: deps.store.kind, error: (error as Error).message }, 'session store write failed')
  }
}

/** A whole number of tokens in decimal digits; anything else (hex, exponents, negatives) is ignored. */
function parseBudget(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\s*\d{1,12}\s*$/.test(raw)) return undefined
  const value = Number(raw)
  return value > 0 ? value : undefined
}
