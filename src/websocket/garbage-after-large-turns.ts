import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * Frees what large socket turns leave behind without waiting for V8 to notice it. A turn that
 * prepares a 10 MB conversation leaves several buffers of that size (the frame received, the request
 * written for the worker, the worker's answer, the masked frame sent) that nothing holds once it is
 * sent. V8 frees them only when it collects, and it collects late for buffers (its own heap stays
 * small): with 16 sockets of 10 MB open, 40-60 MB of them were still resident, and with glibc's
 * malloc as it comes the space they leave stays in its heap (docs/memory-budgets.md). So after every
 * `everyBytes` of large conversations sent, and once sockets go quiet, one full collection runs on
 * the main thread (milliseconds to tens of them, against the hundreds a 10 MB turn costs it anyway).
 */
export class GarbageAfterLargeTurns {
  readonly #everyBytes: number
  readonly #quietMs: number
  readonly #collect: () => void
  #sinceCollection = 0
  #quiet: NodeJS.Timeout | undefined
  #collections = 0

  constructor(everyBytes: number, quietMs: number, collect: () => void = fullCollection()) {
    this.#everyBytes = everyBytes
    this.#quietMs = quietMs
    this.#collect = collect
  }

  /** Full collections run so far. */
  get collections(): number {
    return this.#collections
  }

  /** A turn that worked on `bytes` of conversation let them go (sent, or ended). */
  released(bytes: number): void {
    this.#sinceCollection += bytes
    if (this.#sinceCollection >= this.#everyBytes) return this.#run()
    clearTimeout(this.#quiet)
    this.#quiet = setTimeout(() => this.#run(), this.#quietMs)
    this.#quiet.unref()
  }

  #run(): void {
    clearTimeout(this.#quiet)
    this.#quiet = undefined
    this.#sinceCollection = 0
    this.#collections++
    // Not in the caller's stack: the turn's own references are gone by the next turn of the loop.
    setImmediate(this.#collect)
  }
}

/** V8's full collection, exposed to a fresh context only (v8.setFlagsFromString, as the rewrite workers do). */
function fullCollection(): () => void {
  let gc: (() => void) | undefined
  return () => {
    if (!gc) {
      setFlagsFromString('--expose-gc')
      gc = runInNewContext('gc') as () => void
    }
    gc()
  }
}
