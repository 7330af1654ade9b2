import { billedDollars, billedInputTokens, type ModelPrices } from '../billing/prices.ts'
import type { Usage } from '../model-call/usage.ts'
import { clientRules, type ClientRuleName } from './client-rule.ts'

/**
 * The client as it would have run without ctxgate, following its own compaction rule: its history
 * grows as the real one does, and where it would have compacted, it sends a compaction request and
 * starts again from a small prefix. What it keeps between requests (real tokens):
 */
export interface VirtualClient {
  /** ctxgate's estimate of the real client's unedited prompt on the previous request. */
  readonly lastEstimate: number
  /** The prompt it sent last (its cached prefix on the next request). */
  readonly lastPrompt: number
  /** The session's first prompt: system, tools and first message, what a compaction keeps. */
  readonly firstPrompt: number
  readonly compactions: number
  /** What ctxgate sent on the previous request (real tokens), and real tokens per estimated token of new content. */
  readonly lastSent: number
  readonly growthScale: number
  /** What the real history grew by per request where the upstream counted it (a moving average). */
  readonly measuredGrowth?: number
}

/** One served request, as ctxgate saw it. */
export interface ServedTurn {
  readonly rule: ClientRuleName
  readonly usage: Usage
  /** Real prompt tokens ctxgate sent (from usage). */
  readonly sentTokens: number
  /** ctxgate's estimates of the client's prompt before edits and of what it sent. */
  readonly estimatedBefore: number
  readonly estimatedAfter: number
  readonly window: number
  readonly maxOutputTokens: number
  /** ctxgate made a new batch on this request: what it sent shrank, so its growth says nothing. */
  readonly newBatch: boolean
}

export interface VirtualBill {
  readonly client: VirtualClient
  /** Billed-equivalent input of what the client would have sent (its compaction request included). */
  readonly billedTokens: number
  readonly dollars: number | null
  /** The client would have compacted before this request. */
  readonly compacted: boolean
}

/** A compaction's summary, in tokens: an estimate (Claude Code's summaries run a few thousand tokens). */
export const summaryTokensEstimate = 2_000

/**
 * The client's request without ctxgate. The unedited prompt is ctxgate's estimate scaled by what the
 * upstream counted for the sent one; the cache mix is that of a client that marks its own prefix
 * (Claude Code, Codex, opencode do): the previous prompt is read, the rest written.
 */
export function virtualRequest(
  previous: VirtualClient | undefined,
  turn: ServedTurn,
  prices: ModelPrices,
): VirtualBill {
  const grown = grownPrompt(previous, turn)
  let prompt = grown.prompt
  const first = previous?.firstPrompt ?? prompt
  let client: VirtualClient = previous ?? {
    lastEstimate: 0,
    lastPrompt: 0,
    firstPrompt: first,
    compactions: 0,
    lastSent: 0,
    growthScale: 1,
  }
  const point = clientRules[turn.rule].compactAt(turn.window, turn.maxOutputTokens)
  let billed = 0
  let dollars: number | null = 0
  let compacted = false
  // Past its point the client compacts first: a compaction request over what it last sent (its cached
  // prefix), then it starts again from its first prompt, the summary and the newest round.
  if (previous && prompt > point && prompt > first + summaryTokensEstimate) {
    const compaction = priced(previous.lastPrompt, previous.lastPrompt, summaryTokensEstimate, prices)
    billed += compaction.billed
    dollars = add(dollars, compaction.dollars)
    const kept = first + summaryTokensEstimate + Math.max(0, prompt - previous.lastPrompt)
    client = { ...client, lastPrompt: first, compactions: client.compactions + 1 }
    prompt = kept
    compacted = true
  }
  const request = priced(client.lastPrompt, prompt, turn.usage.outputTokens, prices)
  billed += request.billed
  dollars = add(dollars, request.dollars)
  return {
    client: {
      ...client,
      lastPrompt: prompt,
      lastEstimate: turn.estimatedBefore,
      lastSent: turn.sentTokens,
      growthScale: grown.growthScale,
      ...(grown.measuredGrowth === undefined ? {} : { measuredGrowth: grown.measuredGrowth }),
    },
    billedTokens: billed,
    dollars,
    compacted,
  }
}

/**
 * What the client would send now: its last prompt plus what its real history grew by since. Where
 * ctxgate's own request only grew (no new batch), that growth is measured: the upstream counted it.
 * After a batch it is ctxgate's estimate of the growth, at the ratio the measured growth had, so the
 * estimate's wobble is never billed as a rewrite. A history under half its size (the real client
 * compacted) starts over.
 */
function grownPrompt(
  previous: VirtualClient | undefined,
  turn: ServedTurn,
): { prompt: number; growthScale: number; measuredGrowth?: number } {
  const scale = turn.estimatedAfter > 0 ? turn.sentTokens / turn.estimatedAfter : 1
  const unedited = Math.max(turn.sentTokens, turn.estimatedBefore * scale)
  if (!previous || turn.estimatedBefore < previous.lastEstimate * 0.5)
    return { prompt: unedited, growthScale: previous?.growthScale ?? 1 }
  const estimatedGrowth = Math.max(0, turn.estimatedBefore - previous.lastEstimate)
  const measuredGrowth = turn.sentTokens - previous.lastSent
  if (!turn.newBatch && estimatedGrowth > 0 && measuredGrowth >= 0)
    return {
      prompt: previous.lastPrompt + measuredGrowth,
      growthScale: 0.7 * previous.growthScale + 0.3 * (measuredGrowth / estimatedGrowth),
      measuredGrowth:
        previous.measuredGrowth === undefined ? measuredGrowth : 0.7 * previous.measuredGrowth + 0.3 * measuredGrowth,
    }
  // On a batch the estimate of the history moves with the calibration factor, which learns between
  // requests and can make the history read smaller than before: such a request grows as requests
  // usually do, measured, once there is a measurement.
  const grown = previous.measuredGrowth ?? estimatedGrowth * previous.growthScale
  return {
    prompt: previous.lastPrompt + grown,
    growthScale: previous.growthScale,
    ...(previous.measuredGrowth === undefined ? {} : { measuredGrowth: previous.measuredGrowth }),
  }
}

function priced(
  cached: number,
  prompt: number,
  outputTokens: number,
  prices: ModelPrices,
): { billed: number; dollars: number | null } {
  const read = Math.min(cached, prompt)
  const usage: Usage = {
    inputTokens: 0,
    cacheReadTokens: read,
    cacheWrite5mTokens: prompt - read,
    cacheWrite1hTokens: 0,
    outputTokens,
  }
  return { billed: billedInputTokens(usage, prices), dollars: billedDollars(usage, prices) }
}

function add(total: number | null, more: number | null): number | null {
  return total === null || more === null ? null : total + more
}

/** Sessions whose virtual client is remembered per process; the least recently seen go first. */
const sessionsKept = 20_000

/** Each session's virtual client, so /ctxgate/sessions and the live page price the same counterfactual. */
export class VirtualClients {
  readonly #sessions = new Map<string, VirtualClient>()

  bill(sessionId: string, turn: ServedTurn, prices: ModelPrices): VirtualBill {
    const bill = virtualRequest(this.#sessions.get(sessionId), turn, prices)
    this.#sessions.delete(sessionId)
    this.#sessions.set(sessionId, bill.client)
    if (this.#sessions.size > sessionsKept) this.#sessions.delete(this.#sessions.keys().next().value as string)
    return bill
  }
}
