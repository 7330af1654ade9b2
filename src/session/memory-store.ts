import { FinishedSessions } from './finished-sessions.ts'
import type { ConversationState, SessionStore } from './session-store.ts'
import { newestWithin } from './state-size.ts'

export interface MemoryStoreOptions {
  readonly maxEntries: number
  readonly idleTtlMs: number
  /** Largest estimated state of one conversation; its oldest frozen decisions go first past it. */
  readonly maxStateBytes?: number
  /** Largest estimated total across conversations; least recently used conversations go first past it. */
  readonly maxTotalBytes?: number
  readonly now?: () => number
  /** Told when a conversation's state had to lose decisions to fit. */
  readonly onTrim?: (kept: number, dropped: number) => void
}

interface Entry {
  readonly state: ConversationState
  readonly bytes: number
}

/**
 * An in-process LRU with idle expiry and byte caps: Map keeps insertion order, so re-inserting on use
 * makes the oldest entry first. A conversation that expires idle has finished: its length is kept.
 */
export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory'
  readonly #entries = new Map<string, Entry>()
  readonly #finished = new FinishedSessions()
  readonly #options: MemoryStoreOptions
  readonly #now: () => number
  #bytes = 0

  constructor(options: MemoryStoreOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  async get(key: string): Promise<ConversationState | undefined> {
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    this.#entries.delete(key)
    if (this.#isIdle(entry)) {
      this.#finish(entry)
      return undefined
    }
    this.#entries.set(key, entry)
    return entry.state
  }

  async set(key: string, state: ConversationState): Promise<void> {
    this.#expireIdle()
    const previous = this.#entries.get(key)
    if (previous) {
      this.#entries.delete(key)
      this.#bytes -= previous.bytes
    }
    const entry = this.#bounded(state)
    this.#entries.set(key, entry)
    this.#bytes += entry.bytes
    const maxTotal = this.#options.maxTotalBytes ?? Infinity
    // The newest entry stays even alone over the total: it is already under the per-state cap.
    while (this.#entries.size > 1 && (this.#entries.size > this.#options.maxEntries || this.#bytes > maxTotal)) {
      const oldest = this.#entries.keys().next().value as string
      this.#bytes -= this.#entries.get(oldest)?.bytes ?? 0
      this.#entries.delete(oldest)
    }
  }

  async finishedLengths(kind: string): Promise<readonly number[]> {
    this.#expireIdle()
    return this.#finished.lengths(kind)
  }

  size(): number {
    return this.#entries.size
  }

  /** Estimated bytes held across all conversations. */
  bytes(): number {
    return this.#bytes
  }

  healthy(): boolean {
    return true
  }

  #isIdle(entry: Entry): boolean {
    return this.#now() - entry.state.lastSeen > this.#options.idleTtlMs
  }

  /** Expires the idle conversations at the old end; use order is last-seen order, so the first busy one ends the sweep. */
  #expireIdle(): void {
    for (const [key, entry] of this.#entries) {
      if (!this.#isIdle(entry)) return
      this.#entries.delete(key)
      this.#finish(entry)
    }
  }

  /** Forgets an idle conversation and keeps its length under its kind (the LRU and byte caps drop without counting). */
  #finish(entry: Entry): void {
    this.#bytes -= entry.bytes
    if (entry.state.kind !== undefined) this.#finished.record(entry.state.kind, entry.state.requests)
  }

  /** Halves the kept decisions until the state fits its cap, newest kept (like the Redis store). */
  #bounded(state: ConversationState): Entry {
    const bounded = newestWithin(state, this.#options.maxStateBytes ?? Infinity)
    if (bounded.state !== state) this.#options.onTrim?.(bounded.kept, bounded.total - bounded.kept)
    return { state: bounded.state, bytes: bounded.bytes }
  }
}
