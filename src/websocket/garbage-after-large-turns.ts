import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Which collection: the young generation only (a few ms), or the whole heap. */
export type Collection = 'young' | 'full'

/**
 * Frees what large socket turns leave behind once the sockets go quiet, without waiting for V8 to
 * notice it. A turn that prepares a 10 MB conversation leaves several buffers of that size (the
 * frame received, the request written for the worker, the worker's answer, the masked frame sent)
 * that nothing holds once it is sent. V8 frees them only when it collects, and it collects late for
 * buffers (its own heap stays small): with 16 sockets of 10 MB open, 40-60 MB of them were still
 * resident, and with glibc's malloc as it comes the space they leave stays in its heap
 * (docs/memory-budgets.md). So `quietMs` after the last large turn was sent, one full collection
 * runs on the main thread; a full one after every large turn as well paused the main thread more
 * often and longer, and left no less resident (BENCHMARKS.md, round 6). Right after each large
 * message is read and sent, a young-generation collection (a few ms) frees the buffers still young.
 */
export class GarbageAfterLargeTurns {
  readonly #quietMs: number
  readonly #collect: (kind: Collection) => void
  #quiet: NodeJS.Timeout | undefined
  #young: NodeJS.Immediate | undefined
  #collections = 0
  #youngCollections = 0

  constructor(quietMs: number, collect: (kind: Collection) => void = collection()) {
    this.#quietMs = quietMs
    this.#collect = collect
  }

  /** Full collections run so far. */
  get collections(): number {
    return this.#collections
  }

  /** Young-generation collections run so far. */
  get youngCollections(): number {
    return this.#youngCollections
  }

  /**
   * A large turn was sent: its buffers, still young, are freed by a young-generation collection
   * once the turn's last step has let go of them; what is older, once no other follows for `quietMs`.
   */
  released(): void {
    if (this.#young === undefined) this.#young = setImmediate(() => this.#runYoung())
    clearTimeout(this.#quiet)
    this.#quiet = setTimeout(() => this.#run(), this.#quietMs)
    this.#quiet.unref()
  }

  #runYoung(): void {
    this.#young = undefined
    this.#youngCollections++
    this.#collect('young')
  }

  #run(): void {
    this.#quiet = undefined
    this.#collections++
    this.#collect('full')
  }
}

/** V8's collections, exposed to a fresh context only (v8.setFlagsFromString, as the rewrite workers do). */
function collection(): (kind: Collection) => void {
  let gc: ((options?: { type: 'minor' | 'major' }) => void) | undefined
  return (kind) => {
    if (!gc) {
      setFlagsFromString('--expose-gc')
      gc = runInNewContext('gc') as typeof gc & object
    }
    gc(kind === 'young' ? { type: 'minor' } : undefined)
  }
}
