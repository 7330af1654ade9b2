import { promptTokensOf } from '../model-call/usage.ts'
import { pricesFor, type ModelPrices } from '../billing/prices.ts'
import { turnCost } from '../session/billed-turn.ts'
import { proactiveCompactPoint } from '../session/client-rule.ts'
import type { LiveEvent } from './live-event.ts'

/** Additive totals of one session; every field sums over its requests. */
export const counterFields = [
  'requests',
  'errors',
  'inputTokens',
  'cacheWrite5mTokens',
  'cacheWrite1hTokens',
  'cacheReadTokens',
  'outputTokens',
  'billedTokens',
  'uneditedBilledTokens',
  'dollars',
  'uneditedDollars',
  'unpricedRequests',
  'tokensRemoved',
  'editBatches',
  'refusalsAvoided',
  'compactionsAvoided',
  'refetches',
  // Requests on which ctxgate had to drop whole old rounds or turns anew: many means the agent may be looping.
  'roundDrops',
] as const

export type CounterField = (typeof counterFields)[number]
export type Counters = Readonly<Record<CounterField, number>>

/** From this many requests with new whole-round drops on, the page warns that the session may be looping (as the log does). */
export const loopWarningDrops = 20

/** What the sessions list shows for one session. */
export interface SessionSummary extends Counters {
  readonly session: string
  readonly client: string
  readonly model: string
  readonly firstSeen: number
  readonly lastSeen: number
  /** The newest unedited prompt was past the client's own compaction point (1) or not (0). */
  readonly pastCompactPoint: number
}

/**
 * Where a client compacts on its own, for clients whose own rule ctxgate does not know: Claude Code's
 * proactive point (session/client-rule.ts) at its usual large max output.
 */
export function compactPointOf(window: number | undefined): number | undefined {
  return window === undefined ? undefined : proactiveCompactPoint(window)
}

/**
 * How much one request adds to its session's totals, given whether the session was already past its
 * compaction point; prices come from the configured table (`economy.prices`), the one ctxgate has.
 */
export function countersOf(
  event: LiveEvent,
  wasPastCompactPoint: boolean,
  priceTable: readonly ModelPrices[] = [],
): Counters {
  const usage = event.usage
  // The session totals' own definition of a turn's cost; a known client by its own rule (it compacts
  // where it would have), any other as if it never compacts. A virtual bill comes only with usage.
  const cost = usage ? turnCost(usage, event, pricesFor(priceTable, event.model), event.virtual) : undefined
  const served = event.status === 200
  return {
    requests: 1,
    errors: served ? 0 : 1,
    inputTokens: usage?.inputTokens ?? 0,
    cacheWrite5mTokens: usage?.cacheWrite5mTokens ?? 0,
    cacheWrite1hTokens: usage?.cacheWrite1hTokens ?? 0,
    cacheReadTokens: usage?.cacheReadTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    billedTokens: cost?.billedTokens ?? 0,
    uneditedBilledTokens: cost?.uneditedBilledTokens ?? 0,
    dollars: cost?.dollars ?? 0,
    uneditedDollars: cost?.uneditedDollars ?? 0,
    unpricedRequests: cost && cost.dollars === null ? 1 : 0,
    tokensRemoved: event.tokensRemoved,
    editBatches: event.newBatch ? 1 : 0,
    refusalsAvoided: event.refusalAvoided ? 1 : 0,
    compactionsAvoided: (
      event.virtual ? event.virtual.compactionAvoided : compactionAvoided(event, wasPastCompactPoint)
    )
      ? 1
      : 0,
    refetches: event.refetches ?? 0,
    roundDrops: event.newBatch && event.dropped > 0 ? 1 : 0,
  }
}

/** The request took the unedited prompt past the client's compaction point while what ctxgate sent stayed below it. */
function compactionAvoided(event: LiveEvent, wasPastCompactPoint: boolean): boolean {
  const point = compactPointOf(event.window)
  if (point === undefined || event.status !== 200 || wasPastCompactPoint) return false
  const sent = event.usage ? promptTokensOf(event.usage) : (event.estimatedAfter ?? 0)
  return (event.estimatedBefore ?? 0) >= point && sent < point
}

/** Whether, after this request, the session's unedited prompt is past its compaction point. */
export function pastCompactPointAfter(event: LiveEvent, wasPastCompactPoint: boolean): boolean {
  const point = compactPointOf(event.window)
  if (point === undefined || event.estimatedBefore === undefined) return wasPastCompactPoint
  return event.estimatedBefore >= point
}

export const zeroCounters: Counters = Object.fromEntries(counterFields.map((field) => [field, 0])) as Counters

/**
 * The session's summary after one more request. Written out field by field (the type checks none is
 * missing): built with Object.fromEntries and a spread, it cost a new hidden class per request on Node 20.
 */
export function addEvent(
  previous: SessionSummary | undefined,
  event: LiveEvent,
  priceTable: readonly ModelPrices[] = [],
): SessionSummary {
  const wasPast = (previous?.pastCompactPoint ?? 0) === 1
  const added = countersOf(event, wasPast, priceTable)
  const base = previous ?? zeroCounters
  return {
    requests: base.requests + added.requests,
    errors: base.errors + added.errors,
    inputTokens: base.inputTokens + added.inputTokens,
    cacheWrite5mTokens: base.cacheWrite5mTokens + added.cacheWrite5mTokens,
    cacheWrite1hTokens: base.cacheWrite1hTokens + added.cacheWrite1hTokens,
    cacheReadTokens: base.cacheReadTokens + added.cacheReadTokens,
    outputTokens: base.outputTokens + added.outputTokens,
    billedTokens: base.billedTokens + added.billedTokens,
    uneditedBilledTokens: base.uneditedBilledTokens + added.uneditedBilledTokens,
    dollars: base.dollars + added.dollars,
    uneditedDollars: base.uneditedDollars + added.uneditedDollars,
    unpricedRequests: base.unpricedRequests + added.unpricedRequests,
    tokensRemoved: base.tokensRemoved + added.tokensRemoved,
    editBatches: base.editBatches + added.editBatches,
    refusalsAvoided: base.refusalsAvoided + added.refusalsAvoided,
    compactionsAvoided: base.compactionsAvoided + added.compactionsAvoided,
    refetches: base.refetches + added.refetches,
    roundDrops: base.roundDrops + added.roundDrops,
    session: event.session,
    client: event.client,
    model: event.model,
    firstSeen: previous?.firstSeen ?? event.at,
    lastSeen: Math.max(previous?.lastSeen ?? 0, event.at),
    pastCompactPoint: pastCompactPointAfter(event, wasPast) ? 1 : 0,
  }
}
