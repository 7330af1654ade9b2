import type { ConversationState, SessionStore } from './session-store.ts'

export interface MemoryStoreOptions {
  readonly maxEntries: number
  readonly idleTtlMs: number
  readonly now?: () => number
}

/** An in-process LRU with idle expiry: Map keeps insertion order, so re-inserting on use makes the oldest entry first. */
export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory'
  readonly #entries = new Map<string, ConversationState>()
  readonly #options: MemoryStoreOptions
  readonly #now: () => number

  constructor(options: MemoryStoreOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  async get(key: string): Promise<ConversationState | undefined> {
    const state = this.#entries.get(key)
    if (!state) return undefined
    if (this.#now() - state.lastSeen > this.#options.idleTtlMs) {
      this.#entries.delete(key)
      return undefined
    }
    this.#entries.delete(key)
    this.#entries.set(key, state)
    return state
  }

  async set(key: string, state: ConversationState): Promise<void> {
    this.#entries.delete(key)
    this.#entries.set(key, state)
    while (this.#entries.size > this.#options.maxEntries)
      this.#entries.delete(this.#entries.keys().next().value as string)
  }

  size(): number {
    return this.#entries.size
  }

  healthy(): boolean {
    return true
  }
}
