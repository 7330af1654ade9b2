/**
 * Bounds the client messages being parsed and prepared at once across every socket, by their size:
 * a large `response.create` costs several times its bytes while it is parsed, planned and rewritten,
 * so sixteen sockets sending 10 MB at once would otherwise all pay that together. A message larger
 * than the whole allowance still runs, alone.
 */
export class PreparationGate {
  readonly #maxBytes: number
  #inFlight = 0
  readonly #waiting: { bytes: number; start: () => void }[] = []

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  /** Resolves once `bytes` may be prepared; call the returned function when done. */
  async enter(bytes: number): Promise<() => void> {
    if (this.#waiting.length > 0 || !this.#fits(bytes))
      await new Promise<void>((start) => this.#waiting.push({ bytes, start }))
    else this.#inFlight += bytes
    let left = false
    return () => {
      if (left) return
      left = true
      this.#inFlight -= bytes
      this.#admit()
    }
  }

  #fits(bytes: number): boolean {
    return this.#inFlight === 0 || this.#inFlight + bytes <= this.#maxBytes
  }

  #admit(): void {
    for (let next = this.#waiting[0]; next && this.#fits(next.bytes); next = this.#waiting[0]) {
      this.#waiting.shift()
      this.#inFlight += next.bytes
      next.start()
    }
  }
}
