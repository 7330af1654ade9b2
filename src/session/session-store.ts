import type { CadenceMemory } from '../rewrite/economy/cadence-memory.ts'
import type { FrozenDecisions } from '../rewrite/types.ts'

/** What ctxgate remembers about one conversation between its requests. */
export interface ConversationState {
  readonly decisions: FrozenDecisions
  /** Index of the previous request's last message in its rewritten form (for a cache breakpoint). */
  readonly previousTail?: number
  /** The system-prompt note is on for this conversation (from its first edit on, then always). */
  readonly noteOn?: boolean
  /** How many messages the client sent last time, and a signature of them, to tell when it rewrote its history. */
  readonly messageCount?: number
  readonly prefixSignature?: string
  /** The cadence estimator's inputs (bounded); absent in states stored before the economy, read as none. */
  readonly economy?: CadenceMemory
  /** Model of the previous request, to tell a cache miss caused by a model change. */
  readonly model?: string
  /** The tool result the previous request kept a cache marker ahead of: the next batch starts there or later. */
  readonly nextEditResult?: string
  /** That result was already edited when the marker's entry was written, so its edit does not move the marker. */
  readonly nextEditCleared?: boolean
  /** The kind of session it is (see `sessionKind`): where its length goes once it has finished. */
  readonly kind?: string
  readonly requests: number
  readonly lastSeen: number
}

/**
 * Where conversation state lives: memory by default, Redis when several replicas share sessions.
 * Methods are async so a network store fits the same interface; a failing store is never fatal.
 */
export interface SessionStore {
  readonly kind: string
  get(key: string): Promise<ConversationState | undefined>
  /** `before` is the state this one follows (as read for the request), so a store can tell what changed. */
  set(key: string, state: ConversationState, before?: ConversationState): Promise<void>
  /**
   * Request counts of finished conversations of this kind, oldest first (at most 50). A conversation
   * finishes when it has been idle past the idle TTL; one the store dropped for room does not count.
   */
  finishedLengths?(kind: string): Promise<readonly number[]>
  size(): number
  /** False while a network store is unreachable (ctxgate keeps serving, without shared state). */
  healthy(): boolean
  /** A network store's circuit breaker: `open` while ctxgate skips it after repeated failures. */
  circuitState?(): 'closed' | 'open' | 'half-open'
  /** A network store's count of keys it found of the wrong type and deleted (garbage, or another build's). */
  repairedKeys?(): number
  close?(): Promise<void>
}
