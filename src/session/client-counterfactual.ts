import { billedDollars, billedInputTokens, type ModelPrices } from '../rewrite/economy/prices.ts'
import type { Usage } from '../model-call/usage.ts'
import { clientRules, type ClientRuleName } from './client-rule.ts'

/**
 * The client as it would have run without ctxgate, following its own compaction rule: its history
 * grows as the real one does, and where it would have compacted, it sends a compaction request and
 * starts again from a small prefix. What it keeps between requests (real tokens):
 */
export interface VirtualClient {
  /** Tokens its own compactions took out of the history it would send. */
  readonly offset: number
  /** The prompt it sent last (its cached prefix on the next request). */
  readonly lastPrompt: number
  /** The session's first prompt: system, tools and first message, what a compaction keeps. */
  readonly firstPrompt: number
  readonly compactions: number
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
  const scale = turn.estimatedAfter > 0 ? turn.sentTokens / turn.estimatedAfter : 1
  const unedited = Math.max(turn.sentTokens, turn.estimatedBefore * scale)
  const first = previous?.firstPrompt ?? unedited
  let client: VirtualClient = previous ?? { offset: 0, lastPrompt: 0, firstPrompt: first, compactions: 0 }
  let prompt = unedited - client.offset
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
    client = { ...client, offset: unedited - kept, lastPrompt: first, compactions: client.compactions + 1 }
    prompt = kept
    compacted = true
  }
  const request = priced(client.lastPrompt, prompt, turn.usage.outputTokens, prices)
  billed += request.billed
  dollars = add(dollars, request.dollars)
  return { client: { ...client, lastPrompt: prompt }, billedTokens: billed, dollars, compacted }
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
