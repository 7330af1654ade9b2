/**
 * Bounds the large client messages being received and prepared, across every socket, by their
 * working set (`websocket.maxPreparingBytes`): a large `response.create` costs several times its
 * bytes while it is received, parsed, rewritten and sent, and before that ws holds every chunk of it
 * received so far. A message takes its place when its first frame header announces its size
 * (announced-messages.ts), and the socket stops reading until the place is given, so at most that
 * much is received or prepared at once, in order of arrival. A message whose working set is larger
 * than the whole allowance still runs, alone (its size is bounded by `server.bodyLimitBytes`).
 */
export class PreparationGate {
  readonly max: number
  /** Bytes a place is charged per byte of its message (1: the message's own size). */
  readonly #perByte: number
  #inFlight = 0
  /** Bytes of places asked for and not yet given back: waiting here, or held. */
  #pending = 0
  #pauses = 0
  readonly #waiting: { bytes: number; start: () => void }[] = []

  constructor(maxBytes: number, perByte = 1) {
    this.max = maxBytes
    this.#perByte = perByte
  }

  /** Bytes of places asked for and not yet given back: waiting (their messages mostly unread) or held. */
  get pending(): number {
    return this.#pending
  }

  /** Bytes of places held: messages being received, waiting for their socket's turn, or in preparation. */
  get held(): number {
    return this.#inFlight
  }

  /** How many times a socket stopped reading to wait for its message's place. */
  get pauses(): number {
    return this.#pauses
  }

  /** A place for a message of `bytes` asked for now would wait (some wait already, or it does not fit). */
  waits(bytes: number): boolean {
    return this.#waiting.length > 0 || !this.#fits(this.#charge(bytes))
  }

  /** A socket stopped reading until its place is given. */
  readingPaused(): void {
    this.#pauses++
  }

  /** Resolves once a message of `bytes` may be held; the place is given back with its `leave` (or grows with `grow`). */
  async enter(bytes: number): Promise<HeldPlace> {
    const charged = this.#charge(bytes)
    this.#pending += charged
    if (this.waits(bytes)) await new Promise<void>((start) => this.#waiting.push({ bytes: charged, start }))
    else this.#inFlight += charged
    return this.#held(bytes, charged)
  }

  /** What a message of `bytes` holds while it is received and prepared: its working set. */
  #charge(bytes: number): number {
    return Math.ceil(bytes * this.#perByte)
  }

  #held(entered: number, enteredCharge: number): HeldPlace {
    let bytes = entered
    let charged = enteredCharge
    let left = false
    return {
      get bytes() {
        return bytes
      },
      grow: (larger) => {
        const more = this.#charge(larger) - charged
        // Alone, a place grows past the allowance: given up, its message (already read) would queue behind unread ones.
        const alone = this.#inFlight === charged
        if (left || more <= 0 || (!alone && this.#inFlight + more > this.max)) return left ? false : more <= 0
        this.#inFlight += more
        this.#pending += more
        bytes = larger
        charged += more
        return true
      },
      leave: () => {
        if (left) return
        left = true
        this.#inFlight -= charged
        this.#pending -= charged
        this.#admit()
      },
    }
  }

  #fits(bytes: number): boolean {
    return this.#inFlight === 0 || this.#inFlight + bytes <= this.max
  }

  #admit(): void {
    for (let next = this.#waiting[0]; next && this.#fits(next.bytes); next = this.#waiting[0]) {
      this.#waiting.shift()
      this.#inFlight += next.bytes
      next.start()
    }
  }
}

/** A place held in the gate. */
export interface HeldPlace {
  /** The message's bytes (the place is charged its working set). */
  readonly bytes: number
  /** Makes the place `larger` when that still fits in the allowance, or when it is the only place held; false when not (nothing changes). */
  grow(larger: number): boolean
  leave(): void
}

/**
 * A large socket message's working set, in copies of its bytes alive at once at most: the frame
 * chunks ws received, the message read from them, the conversation written in shared memory for the
 * worker, the worker's decoded text, the request it writes back and the frame sent upstream.
 * Measured at the peak of 16 sockets of 10 MB: 5.1 (the main thread's buffers beyond the histories,
 * 36.6 MiB, and the worker's external memory, 12.6 MiB; BENCHMARKS.md, WebSocket memory round 9).
 * The worker's V8 heap is bounded apart (`rewriteWorkers.maxHeapBytes`).
 */
export const preparationCopies = 6

/** Messages (and conversations to prepare) smaller than this skip the gate: they cost little, and must not queue behind large ones. */
export const gatedBytes = 256 * 1024

/**
 * One client message's place in the gate: at most one at a time, taken for the message when its
 * header arrived (or when it arrives) and made larger when what it prepares turns out larger (a
 * short message that continues a long conversation prepares the whole conversation).
 */
export class GatePlace {
  readonly #gate: PreparationGate | undefined
  #held: HeldPlace | undefined

  /** `held`: the place the message took when its first frame header announced it, if it did. */
  constructor(gate: PreparationGate | undefined, held?: HeldPlace) {
    this.#gate = gate
    this.#held = held
  }

  /** Holds a place for `bytes`, unless small or a place as large is held; one that cannot grow in place is given up and asked for anew. */
  async take(bytes: number): Promise<void> {
    if (!this.#gate || bytes < gatedBytes || (this.#held?.grow(bytes) ?? false)) return
    this.give()
    this.#held = await this.#gate.enter(bytes)
  }

  give(): void {
    this.#held?.leave()
    this.#held = undefined
  }
}
