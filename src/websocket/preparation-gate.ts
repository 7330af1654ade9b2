/**
 * Bounds the large client messages being received and prepared, across every socket, by their size
 * (`websocket.maxPreparingBytes`): a large `response.create` costs several times its bytes while it
 * is parsed, planned and rewritten, and before that ws holds every chunk of it received so far. A
 * message takes its place when its first frame header announces its size (announced-messages.ts),
 * and the socket stops reading until the place is given, so at most that many bytes are received or
 * prepared at once, in order of arrival. A message larger than the whole allowance still runs, alone.
 */
export class PreparationGate {
  readonly max: number
  #inFlight = 0
  /** Bytes of places asked for and not yet given back: waiting here, or held. */
  #pending = 0
  #pauses = 0
  readonly #waiting: { bytes: number; start: () => void }[] = []

  constructor(maxBytes: number) {
    this.max = maxBytes
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

  /** A place of `bytes` asked for now would wait (some wait already, or it does not fit). */
  waits(bytes: number): boolean {
    return this.#waiting.length > 0 || !this.#fits(bytes)
  }

  /** A socket stopped reading until its place is given. */
  readingPaused(): void {
    this.#pauses++
  }

  /** Resolves once `bytes` may be held; the place is given back with its `leave` (or grows with `grow`). */
  async enter(bytes: number): Promise<HeldPlace> {
    this.#pending += bytes
    if (this.waits(bytes)) await new Promise<void>((start) => this.#waiting.push({ bytes, start }))
    else this.#inFlight += bytes
    return this.#held(bytes)
  }

  #held(entered: number): HeldPlace {
    let bytes = entered
    let left = false
    return {
      get bytes() {
        return bytes
      },
      grow: (larger) => {
        const more = larger - bytes
        if (left || more <= 0 || this.#inFlight + more > this.max) return left ? false : more <= 0
        this.#inFlight += more
        this.#pending += more
        bytes = larger
        return true
      },
      leave: () => {
        if (left) return
        left = true
        this.#inFlight -= bytes
        this.#pending -= bytes
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
  readonly bytes: number
  /** Makes the place `larger` when that still fits in the allowance; false when it does not (nothing changes). */
  grow(larger: number): boolean
  leave(): void
}

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
