import { MemorySessionStore } from '../session/memory-store.ts'
import type { ConversationState, SessionStore } from '../session/session-store.ts'

/**
 * How long the sessions replayed so far ran, by kind: what a ctxgate that had already served them
 * would know when the next one starts (`ctxgate replay --learn`). One per variant, kept across runs.
 */
export class ReplayedLengths {
  readonly #byKind = new Map<string, number[]>()

  lengths(kind: string): readonly number[] {
    return this.#byKind.get(kind) ?? []
  }

  record(kind: string, requests: number): void {
    const lengths = this.#byKind.get(kind) ?? []
    lengths.push(requests)
    this.#byKind.set(kind, lengths)
  }
}

/**
 * A memory store that also answers with the lengths of sessions replayed before this one, and,
 * once the run is over, files this run's conversations among them (they have finished).
 */
export class LearningStore implements SessionStore {
  readonly kind = 'memory'
  readonly #inner: MemorySessionStore
  readonly #learned: ReplayedLengths
  /** Each conversation's kind and length as last saved. */
  readonly #seen = new Map<string, { kind: string; requests: number }>()

  constructor(inner: MemorySessionStore, learned: ReplayedLengths) {
    this.#inner = inner
    this.#learned = learned
  }

  get(key: string): Promise<ConversationState | undefined> {
    return this.#inner.get(key)
  }

  async set(key: string, state: ConversationState): Promise<void> {
    if (state.kind !== undefined) this.#seen.set(key, { kind: state.kind, requests: state.requests })
    await this.#inner.set(key, state)
  }

  async finishedLengths(kind: string): Promise<readonly number[]> {
    return [...this.#learned.lengths(kind), ...(await this.#inner.finishedLengths(kind))]
  }

  size(): number {
    return this.#inner.size()
  }

  healthy(): boolean {
    return true
  }

  /** The run is over: its conversations count as finished sessions for the runs after it. */
  finishRun(): void {
    for (const { kind, requests } of this.#seen.values()) this.#learned.record(kind, requests)
    this.#seen.clear()
  }
}
