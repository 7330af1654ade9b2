import type { Usage } from '../model-call/usage.ts'
import type { BilledTurn } from './billed-turn.ts'

/** What one session has cost so far, for harness authors deciding whether to split work. */
export interface SessionTotals {
  readonly sessionId: string
  readonly turns: number
  readonly promptTokens: number
  readonly inputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  readonly outputTokens: number
  readonly tokensRemoved: number
  readonly prefixBreaks: number
  readonly refusalsAvoided: number
  /** Prompt billed so far in uncached-input equivalents, and the same had ctxgate edited nothing (estimated). */
  readonly billedTokens: number
  readonly uneditedBilledTokens: number
  /** Dollars so far at the configured prices, and unedited; answers of models without a price count in `unpricedTurns`. */
  readonly dollars: number
  readonly uneditedDollars: number
  readonly unpricedTurns: number
  readonly models: readonly string[]
  readonly firstSeen: string
  readonly lastSeen: string
}

export interface TurnRecord {
  readonly model: string
  readonly usage?: Usage
  readonly tokensRemoved: number
  readonly prefixBreak: boolean
  readonly refusalAvoided: boolean
  /** What the answer cost, when the upstream reported usage. */
  readonly billed?: BilledTurn
}

export const maxModelsPerSession = 8

/** Where per-session totals live: memory by default, Redis when replicas share them. */
export interface SessionTotalsStore {
  record(sessionId: string, turn: TurnRecord): Promise<void>
  get(sessionId: string): Promise<SessionTotals | undefined>
  /** Most recently seen first. */
  list(limit: number): Promise<SessionTotals[]>
  count(): Promise<number>
}

/** Per-session totals in a bounded in-memory LRU (least recently seen sessions go first). */
export class SessionAccounting implements SessionTotalsStore {
  readonly #sessions = new Map<string, SessionTotals>()
  readonly #maxEntries: number
  readonly #now: () => number

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.#maxEntries = maxEntries
    this.#now = now
  }

  async record(sessionId: string, turn: TurnRecord): Promise<void> {
    const now = new Date(this.#now()).toISOString()
    const previous = this.#sessions.get(sessionId)
    const usage = turn.usage
    const written = usage ? usage.cacheWrite5mTokens + usage.cacheWrite1hTokens : 0
    const models =
      previous?.models.includes(turn.model) || (previous?.models.length ?? 0) >= maxModelsPerSession
        ? (previous?.models ?? [])
        : [...(previous?.models ?? []), turn.model]
    const next: SessionTotals = {
      sessionId,
      turns: (previous?.turns ?? 0) + 1,
      promptTokens: (previous?.promptTokens ?? 0) + (usage ? usage.inputTokens + usage.cacheReadTokens + written : 0),
      inputTokens: (previous?.inputTokens ?? 0) + (usage?.inputTokens ?? 0),
      cacheReadTokens: (previous?.cacheReadTokens ?? 0) + (usage?.cacheReadTokens ?? 0),
      cacheWriteTokens: (previous?.cacheWriteTokens ?? 0) + written,
      outputTokens: (previous?.outputTokens ?? 0) + (usage?.outputTokens ?? 0),
      tokensRemoved: (previous?.tokensRemoved ?? 0) + turn.tokensRemoved,
      prefixBreaks: (previous?.prefixBreaks ?? 0) + (turn.prefixBreak ? 1 : 0),
      refusalsAvoided: (previous?.refusalsAvoided ?? 0) + (turn.refusalAvoided ? 1 : 0),
      billedTokens: (previous?.billedTokens ?? 0) + (turn.billed?.billedTokens ?? 0),
      uneditedBilledTokens: (previous?.uneditedBilledTokens ?? 0) + (turn.billed?.uneditedBilledTokens ?? 0),
      dollars: (previous?.dollars ?? 0) + (turn.billed?.microDollars ?? 0) / 1_000_000,
      uneditedDollars: (previous?.uneditedDollars ?? 0) + (turn.billed?.uneditedMicroDollars ?? 0) / 1_000_000,
      unpricedTurns: (previous?.unpricedTurns ?? 0) + (turn.billed && !turn.billed.priced ? 1 : 0),
      models,
      firstSeen: previous?.firstSeen ?? now,
      lastSeen: now,
    }
    this.#sessions.delete(sessionId)
    this.#sessions.set(sessionId, next)
    while (this.#sessions.size > this.#maxEntries) this.#sessions.delete(this.#sessions.keys().next().value as string)
  }

  async get(sessionId: string): Promise<SessionTotals | undefined> {
    return this.#sessions.get(sessionId)
  }

  async list(limit: number): Promise<SessionTotals[]> {
    return [...this.#sessions.values()].toReversed().slice(0, limit)
  }

  async count(): Promise<number> {
    return this.#sessions.size
  }
}
