import { promptBudget } from '../../config/model-limits.ts'
import type { Config } from '../../config/schema.ts'
import type { ChatAdapter } from '../../providers/adapter-contract.ts'
import { limitFloorShare } from '../../calibration/calibration.ts'
import type { EditPointPrices } from '../../rewrite/economy/edit-point.ts'
import { pricesFor, writePrice, type ModelPrices } from '../../billing/prices.ts'
import type { EconomySettings } from '../../rewrite/economy/request-decision.ts'
import { defaultEconomyPolicy } from '../../rewrite/economy/types.ts'
import { systemNote } from '../../rewrite/notes.ts'
import type { PipelineInput } from '../../rewrite/pipeline.ts'
import { promptTokens } from '../../rewrite/prompt-tokens.ts'
import type { ChatView } from '../../rewrite/types.ts'
import { firstHeader } from '../../util/headers.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'
import { noteCostOnce } from './note-cost-memo.ts'

/** What the pipeline needs besides the conversation's memory, the calibration factor and the clock. */
export function pipelineInput(
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
    // Fixed fields, no spread: the pipeline copies this object for each plan, and V8 copies one of a single shape fast.
    economy: economyOf(deps.config, prices),
    reachBack: reachBackOf(prices),
    dropNoteFraming: format.adapter.dropNoteFraming,
  }
}

/** The window, the budget (lowered by the header) and what the upstream said its limit is. */
export function budgetLimits(request: HookRequest, chat: ReadChat, scope: string): PipelineInput['limits'] {
  const { view, limits } = chat
  const headerBudget = budgetHeader(request)
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

/** The request's `x-ctxgate-budget`: a whole number of tokens in decimal digits; anything else (hex, exponents, negatives) is ignored. */
export function budgetHeader(request: HookRequest): number | undefined {
  const raw = firstHeader(request.incoming['x-ctxgate-budget'])
  if (raw === undefined || !/^\s*\d{1,12}\s*$/.test(raw)) return undefined
  const value = Number(raw)
  return value > 0 ? value : undefined
}

/** Where and from when the note goes: `auto` puts it at the edit point where the wire format allows a message there. */
export function notePlacement(
  config: Readonly<Config>,
  adapter: ChatAdapter,
): { readonly at: 'head' | 'edit-point'; readonly from: 'first-edit' | 'first-request' } {
  const setting = config.rewrite.systemNotePlacement
  if (setting === 'first-request') return { at: 'head', from: 'first-request' }
  return { at: setting === 'auto' && adapter.noteAtEditPoint === true ? 'edit-point' : 'head', from: 'first-edit' }
}

/** Each configuration's economy settings per price entry, made once: the same for every request of a model. */
const economySettings = new WeakMap<Readonly<Config>, WeakMap<ModelPrices, EconomySettings>>()

/** The cache-priced economy's prices and policy for this model; undefined under `budget-only`. */
function economyOf(config: Readonly<Config>, prices: ModelPrices): EconomySettings | undefined {
  if (config.rewrite.economy !== 'cache-priced') return undefined
  let perPrices = economySettings.get(config)
  if (perPrices === undefined) economySettings.set(config, (perPrices = new WeakMap()))
  const known = perPrices.get(prices)
  if (known !== undefined) return known
  const settings = economySettingsOf(config, prices)
  perPrices.set(prices, settings)
  return settings
}

function economySettingsOf(config: Readonly<Config>, prices: ModelPrices): EconomySettings {
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
  return { prices, policy }
}

/**
 * Prices for whether a batch reaches back to a small old result, whatever the strategy: the model's
 * read and 5-minute write prices over the longest horizon the economy prices, so only a result that
 * could never pay for the rewrite it causes is left whole, and the verdict does not drift as a session grows.
 */
function reachBackOf(prices: ModelPrices): EditPointPrices {
  const known = reachBacks.get(prices)
  if (known !== undefined) return known
  const reachBack = {
    read: prices.cacheRead,
    write: writePrice(prices, '5m'),
    requestsAhead: defaultEconomyPolicy.horizonCap,
  }
  reachBacks.set(prices, reachBack)
  return reachBack
}

/** Made once per price entry (the configuration's, which never changes). */
const reachBacks = new WeakMap<ModelPrices, EditPointPrices>()

/**
 * Tokens the system note adds, as the adapter writes it (a block, a message, a paragraph; a string
 * system prompt may become a list): measured on the request cut to its first message, so the planner
 * never undercounts it. 0 when the body already carries it.
 */
function systemNoteTokens(adapter: ChatAdapter, chat: ReadChat, note: string, at: 'head' | 'edit-point'): number {
  const { json, estimator } = chat
  return noteCostOnce({ adapter, estimator, note, at, body: json }, () => measureNoteTokens(adapter, chat, note, at))
}

function measureNoteTokens(adapter: ChatAdapter, chat: ReadChat, note: string, at: 'head' | 'edit-point'): number {
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
  return Math.max(0, promptTokens(probe(note)) - promptTokens(probe(undefined)))
}
