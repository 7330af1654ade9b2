/**
 * The memory a socket's conversation takes while it is prepared, and the room it may take: what
 * `websocket.maxHistoryBytes` leaves unused by the histories kept. So the kept histories and the
 * preparations in progress together stay within that setting (and the messages waiting for
 * preparation within `websocket.maxPreparingBytes`): a preparation that does not fit waits while
 * others run, and one that does not fit beside the histories alone is not made (the socket forwards
 * the message as the client sent it). docs/memory-budgets.md.
 */
import type { HistoryBudget } from './history-budget.ts'

/**
 * A preparation's resident cost beyond the conversation itself, measured by
 * bench/websocket-memory.ts (one socket, peak RSS less the history kept): in a rewrite worker
 * +68 MB for a 1.2 MB conversation, +131 for 5 MB, +164 for 10 MB (the worker's own heap, the
 * parse tree, the request written for it and its answer, the frame sent); on the main thread +100
 * for 10 MB. Rounded up: a worker's fixed part plus a multiple of the bytes.
 */
const workerFixedBytes = 64 * 1024 * 1024
const workerBytesPerByte = 14
const mainThreadBytesPerByte = 12

/** Conversations smaller than this are prepared without a reservation: they cost little (as in preparation-gate.ts). */
export const reservedAboveBytes = 256 * 1024

export class PreparationMemory {
  readonly #histories: HistoryBudget
  readonly #inWorker: (bytes: number) => boolean
  readonly #waiting: { readonly bytes: number; readonly settle: (release: (() => void) | undefined) => void }[] = []
  #reserved = 0
  #refusals = 0

  /** `inWorker` says whether a conversation this large is prepared in a rewrite worker. */
  constructor(histories: HistoryBudget, inWorker: (bytes: number) => boolean) {
    this.#histories = histories
    this.#inWorker = inWorker
  }

  /** The estimated working set of the preparations in progress. */
  get reserved(): number {
    return this.#reserved
  }

  /** Preparations not made because they would not fit beside the histories kept. */
  get refusals(): number {
    return this.#refusals
  }

  /** What preparing a conversation of `bytes` is estimated to take while it runs. */
  workingSet(bytes: number): number {
    if (bytes < reservedAboveBytes) return 0
    return this.#inWorker(bytes) ? workerFixedBytes + workerBytesPerByte * bytes : mainThreadBytesPerByte * bytes
  }

  /**
   * Resolves with the function that gives the room back once the preparation is over, or with
   * undefined when it cannot fit even with no other preparation running.
   */
  reserve(bytes: number): Promise<(() => void) | undefined> {
    const size = this.workingSet(bytes)
    if (size === 0) return Promise.resolve(() => undefined)
    if (this.#waiting.length === 0 && this.#fits(size)) return Promise.resolve(this.#hold(size))
    if (this.#reserved === 0) return Promise.resolve(this.#refuse())
    return new Promise((settle) => this.#waiting.push({ bytes: size, settle }))
  }

  #refuse(): undefined {
    this.#refusals++
    return undefined
  }

  /** Takes the room now (not in a later microtask, so the next one admitted sees it taken). */
  #hold(size: number): () => void {
    this.#reserved += size
    let given = false
    return () => {
      if (given) return
      given = true
      this.#reserved -= size
      this.#admit()
    }
  }

  #fits(size: number): boolean {
    return this.#histories.used + this.#reserved + size <= this.#histories.max
  }

  /** Waiting preparations in order: each that fits starts; one that cannot fit even alone is refused. */
  #admit(): void {
    for (let next = this.#waiting[0]; next; next = this.#waiting[0]) {
      if (!this.#fits(next.bytes) && this.#reserved > 0) return
      this.#waiting.shift()
      next.settle(this.#fits(next.bytes) ? this.#hold(next.bytes) : this.#refuse())
    }
  }
}
