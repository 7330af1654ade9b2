import { promptTokensOf, type Usage } from '../model-call/usage.ts'
import type { BilledTurn } from './billed-turn.ts'
import type { Arm } from './holdout-arm.ts'

/** The additive totals of a session, each summed over its turns. */
export const sessionCounterFields = [
  'turns',
  'promptTokens',
  'inputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'outputTokens',
  'compactionPromptTokens',
  'compactionOutputTokens',
  'serverClearedToolUses',
  'serverClearedThinkingTurns',
  'serverClearedInputTokens',
  'tokensRemoved',
  'prefixBreaks',
  'refusalsAvoided',
  'refetches',
  'refetchTokens',
  'billedTokens',
  'uneditedBilledTokens',
  'microDollars',
  'uneditedMicroDollars',
  'unpricedTurns',
  'lengthRefusals',
  'clientCompactions',
  'clientErrors',
  'unmeteredTurns',
  'economyBatches',
  'ledgerPredictedCost',
  'ledgerPredictedSaving',
  'ledgerRealizedRewrite',
  'ledgerRealizedSaved',
] as const

export type SessionCounters = Readonly<Record<(typeof sessionCounterFields)[number], number>>

/** Dollars are summed as whole millionths (exact in Redis's HINCRBY) and read out as dollars. */
type DollarCounters = 'microDollars' | 'uneditedMicroDollars'

/** What one session has cost so far, for harness authors deciding whether to split work. */
export interface SessionTotals extends Omit<SessionCounters, DollarCounters> {
  readonly sessionId: string
  /** Dollars so far at the configured prices, and had ctxgate edited nothing (estimated); unpriced answers count in `unpricedTurns`. */
  readonly dollars: number
  readonly uneditedDollars: number
  readonly models: readonly string[]
  readonly firstSeen: string
  readonly lastSeen: string
  /** The holdout arm (docs/holdout.md) and kind the session's first recorded request had. */
  readonly arm?: Arm
  readonly kind?: string
}

export interface TurnRecord {
  readonly model: string
  readonly usage?: Usage
  readonly tokensRemoved: number
  readonly prefixBreak: boolean
  readonly refusalAvoided: boolean
  /** Calls that fetched again what ctxgate had cleared or folded, and their results' estimated tokens. */
  readonly refetches?: number
  readonly refetchTokens?: number
  /** What the answer cost, when the upstream reported usage. */
  readonly billed?: BilledTurn
  readonly arm?: Arm
  readonly kind?: string
  /** ctxgate refused the request for its length itself. */
  readonly lengthRefusal?: boolean
  readonly clientCompacted?: boolean
  /** The answer's status was 4xx (the upstream's refusals for length among them). */
  readonly clientError?: boolean
  /** The upstream answered 200: without usage, the turn's cost is unknown. */
  readonly answered?: boolean
  /** The regret ledger's figures of this answer (uncached-input tokens; see metrics/record-ledger.ts). */
  readonly ledger?: {
    readonly batches: number
    readonly predictedCost: number
    readonly predictedSaving: number
    readonly realizedRewrite: number
    readonly realizedSaved: number
  }
}

export const maxModelsPerSession = 8

/** What one turn adds to its session's totals. */
export function turnIncrements(turn: TurnRecord): SessionCounters {
  const usage = turn.usage
  return {
    turns: 1,
    promptTokens: usage ? promptTokensOf(usage) : 0,
    inputTokens: usage?.inputTokens ?? 0,
    cacheReadTokens: usage?.cacheReadTokens ?? 0,
    cacheWriteTokens: usage ? usage.cacheWrite5mTokens + usage.cacheWrite1hTokens : 0,
    outputTokens: usage?.outputTokens ?? 0,
    compactionPromptTokens: usage?.compaction ? promptTokensOf(usage.compaction) : 0,
    compactionOutputTokens: usage?.compaction?.outputTokens ?? 0,
    serverClearedToolUses: usage?.serverEdits?.clearedToolUses ?? 0,
    serverClearedThinkingTurns: usage?.serverEdits?.clearedThinkingTurns ?? 0,
    serverClearedInputTokens: usage?.serverEdits?.clearedInputTokens ?? 0,
    tokensRemoved: turn.tokensRemoved,
    prefixBreaks: turn.prefixBreak ? 1 : 0,
    refusalsAvoided: turn.refusalAvoided ? 1 : 0,
    refetches: turn.refetches ?? 0,
    refetchTokens: turn.refetchTokens ?? 0,
    billedTokens: turn.billed?.billedTokens ?? 0,
    uneditedBilledTokens: turn.billed?.uneditedBilledTokens ?? 0,
    microDollars: turn.billed?.microDollars ?? 0,
    uneditedMicroDollars: turn.billed?.uneditedMicroDollars ?? 0,
    unpricedTurns: turn.billed && !turn.billed.priced ? 1 : 0,
    lengthRefusals: turn.lengthRefusal ? 1 : 0,
    clientCompactions: turn.clientCompacted ? 1 : 0,
    clientErrors: turn.clientError ? 1 : 0,
    unmeteredTurns: turn.answered === true && !usage ? 1 : 0,
    economyBatches: turn.ledger?.batches ?? 0,
    // Whole tokens: Redis sums counters with HINCRBY.
    ledgerPredictedCost: Math.round(turn.ledger?.predictedCost ?? 0),
    ledgerPredictedSaving: Math.round(turn.ledger?.predictedSaving ?? 0),
    ledgerRealizedRewrite: Math.round(turn.ledger?.realizedRewrite ?? 0),
    ledgerRealizedSaved: Math.round(turn.ledger?.realizedSaved ?? 0),
  }
}

/** Totals as readers see them: dollars instead of the millionths they are summed in. */
export function withDollars<T extends SessionCounters>(
  counters: T,
): Omit<T, DollarCounters> & {
  dollars: number
  uneditedDollars: number
} {
  const { microDollars, uneditedMicroDollars, ...rest } = counters
  return { ...rest, dollars: microDollars / 1_000_000, uneditedDollars: uneditedMicroDollars / 1_000_000 }
}

/** A session keeps the arm and kind it started with. */
export function armAndKind(from: { readonly arm?: Arm; readonly kind?: string }): { arm?: Arm; kind?: string } {
  return {
    ...(from.arm === undefined ? {} : { arm: from.arm }),
    ...(from.kind === undefined ? {} : { kind: from.kind }),
  }
}

/** Where per-session totals live: memory by default, Redis when replicas share them. */
export interface SessionTotalsStore {
  record(sessionId: string, turn: TurnRecord): Promise<void>
  get(sessionId: string): Promise<SessionTotals | undefined>
  /** Most recently seen first. */
  list(limit: number): Promise<SessionTotals[]>
  count(): Promise<number>
}

interface StoredTotals extends SessionCounters {
  readonly sessionId: string
  readonly models: readonly string[]
  readonly firstSeen: string
  readonly lastSeen: string
  readonly arm?: Arm
  readonly kind?: string
}

/** Per-session totals in a bounded in-memory LRU (least recently seen sessions go first). */
export class SessionAccounting implements SessionTotalsStore {
  readonly #sessions = new Map<string, StoredTotals>()
  readonly #maxEntries: number
  readonly #now: () => number

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.#maxEntries = maxEntries
    this.#now = now
  }

  async record(sessionId: string, turn: TurnRecord): Promise<void> {
    const now = new Date(this.#now()).toISOString()
    const previous = this.#sessions.get(sessionId)
    const models =
      previous?.models.includes(turn.model) || (previous?.models.length ?? 0) >= maxModelsPerSession
        ? (previous?.models ?? [])
        : [...(previous?.models ?? []), turn.model]
    const added = turnIncrements(turn)
    const counters = Object.fromEntries(
      sessionCounterFields.map((field) => [field, (previous?.[field] ?? 0) + added[field]]),
    ) as SessionCounters
    const next: StoredTotals = {
      sessionId,
      ...counters,
      models,
      firstSeen: previous?.firstSeen ?? now,
      lastSeen: now,
      ...armAndKind(previous ?? turn),
    }
    this.#sessions.delete(sessionId)
    this.#sessions.set(sessionId, next)
    while (this.#sessions.size > this.#maxEntries) this.#sessions.delete(this.#sessions.keys().next().value as string)
  }

  async get(sessionId: string): Promise<SessionTotals | undefined> {
    const stored = this.#sessions.get(sessionId)
    return stored && withDollars(stored)
  }

  async list(limit: number): Promise<SessionTotals[]> {
    return [...this.#sessions.values()]
      .toReversed()
      .slice(0, limit)
      .map((stored) => withDollars(stored))
  }

  async count(): Promise<number> {
    return this.#sessions.size
  }
}
