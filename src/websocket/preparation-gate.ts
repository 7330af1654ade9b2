/**
 * Bounds the large client messages held before and during their preparation, across every socket,
 * by their size (`websocket.maxPreparingBytes`): a large `response.create` costs several times its
 * bytes while it is parsed, planned and rewritten, so at most that many bytes are prepared at once,
 * and while that many are waiting or in preparation every socket stops reading more (`onPressure`),
 * so the messages queued here cannot grow without bound either. A message larger than the whole
 * allowance still runs, alone.
 */
export class PreparationGate {
  readonly max: number
  readonly #onPressure: (paused: boolean) => void
  #inFlight = 0
  /** Bytes received and not yet prepared: waiting here, or in preparation. */
  #pending = 0
  #paused = false
  #pauses = 0
  readonly #waiting: { bytes: number; start: () => void }[] = []

  constructor(maxBytes: number, onPressure: (paused: boolean) => void = () => undefined) {
    this.max = maxBytes
    this.#onPressure = onPressure
  }

  get pending(): number {
    return this.#pending
  }

  /** How many times the sockets' reading was paused because the pending bytes reached the allowance. */
  get pauses(): number {
    return this.#pauses
  }

  get paused(): boolean {
    return this.#paused
  }

  /** Resolves once `bytes` may be prepared; call the returned function when done (or when giving the place up). */
  async enter(bytes: number): Promise<() => void> {
    this.#pending += bytes
    this.#pressure()
    if (this.#waiting.length > 0 || !this.#fits(bytes))
      await new Promise<void>((start) => this.#waiting.push({ bytes, start }))
    else this.#inFlight += bytes
    let left = false
    return () => {
      if (left) return
      left = true
      this.#inFlight -= bytes
      this.#pending -= bytes
      this.#admit()
      this.#pressure()
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

  #pressure(): void {
    const over = this.#pending >= this.max
    if (over === this.#paused) return
    this.#paused = over
    if (over) this.#pauses++
    this.#onPressure(over)
  }
}

/** Messages (and conversations to prepare) smaller than this skip the gate: they cost little, and must not queue behind large ones. */
export const gatedBytes = 256 * 1024

/**
 * One client message's place in the gate: at most one at a time, taken for the message when it
 * arrives and swapped for a larger one when what it prepares turns out larger (a short message
 * that continues a long conversation prepares the whole conversation).
 */
export class GatePlace {
  readonly #gate: PreparationGate | undefined
  #leave: (() => void) | undefined
  #bytes = 0

  constructor(gate: PreparationGate | undefined) {
    this.#gate = gate
  }

  /** Holds a place for `bytes`, unless small or a place as large is held; a smaller one is given up first. */
  async take(bytes: number): Promise<void> {
    if (!this.#gate || bytes < gatedBytes || bytes <= this.#bytes) return
    this.give()
    this.#leave = await this.#gate.enter(bytes)
    this.#bytes = bytes
  }

  give(): void {
    this.#leave?.()
    this.#leave = undefined
    this.#bytes = 0
  }
}
