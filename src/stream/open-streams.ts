/**
 * The event streams being relayed right now, each with a way to end it properly: when the shutdown
 * grace is over, each gets an error event in its provider's format before the process exits, so
 * the client's SDK raises a clear error instead of seeing the connection drop.
 */
export class OpenStreams {
  readonly #cuts = new Set<() => void>()

  get size(): number {
    return this.#cuts.size
  }

  /** Registers one stream's cut; the returned function unregisters it when the stream ends. */
  add(cut: () => void): () => void {
    this.#cuts.add(cut)
    return () => this.#cuts.delete(cut)
  }

  /** Cuts every open stream; returns how many there were. */
  cutAll(): number {
    const cuts = [...this.#cuts]
    this.#cuts.clear()
    for (const cut of cuts) {
      try {
        cut()
      } catch {
        // One stream that cannot be written to must not keep the others from their error event.
      }
    }
    return cuts.length
  }
}
