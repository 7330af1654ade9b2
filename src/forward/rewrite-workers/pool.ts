import { startModuleWorker } from '../../util/start-worker.ts'
import { Worker, type ResourceLimits } from 'node:worker_threads'
import type { Config } from '../../config/schema.ts'
import type {
  FromRewriteWorker,
  PlanJob,
  PlanReply,
  ReadJob,
  ReadReply,
  RewriteWorkerData,
  ToRewriteWorker,
} from './protocol.ts'

/** The pool's settings (`rewriteWorkers.*` in the config, docs/configuration.md). */
export interface PoolSettings {
  readonly threads: number
  /** Bytes of bodies waiting for a worker or in one; past it a new body is refused (one larger runs alone). */
  readonly maxQueuedBytes: number
  /** A job (read, the main thread's store reads, plan) that takes longer has its worker ended. */
  readonly timeoutMs: number
  /** A worker idle this long is ended: its heap, grown to the largest body it rewrote, goes back to the system. */
  readonly idleMs: number
  /** Each worker's V8 heap, young generation included; a worker that needs more ends, and its body goes on as sent. */
  readonly maxHeapBytes: number
}

/**
 * A rewrite worker's young generation (V8's default is sized for a whole process): a 10 MB body's
 * parse tree and output pass through it, and the heap it grew to stayed resident while the next
 * job ran. 8 MiB took the peak of 16 sockets of 10 MB down by 20-35 MB, with jobs no slower
 * (BENCHMARKS.md, WebSocket memory round 7).
 */
const youngGenerationMb = 8

/**
 * V8's limits for a worker: its heap, young and old generation together, within `maxHeapBytes`.
 * V8 ends a worker that cannot fit (ERR_WORKER_OUT_OF_MEMORY), which fails its job open.
 */
export function workerLimits(maxHeapBytes: number): ResourceLimits {
  const heapMb = Math.floor(maxHeapBytes / (1024 * 1024))
  return { maxYoungGenerationSizeMb: youngGenerationMb, maxOldGenerationSizeMb: heapMb - youngGenerationMb }
}

/** The pool's queue is at its byte budget: the request gets a provider-shaped "overloaded" error. */
export class WorkersBusy extends Error {}

/** The worker crashed, timed out, or failed on this body: the request goes on as the client sent it. */
export class WorkerFailed extends Error {}

/** One job's use of one worker, read then plan, for as long as `run`'s callback lasts. */
export interface WorkerLease {
  read(job: Omit<ReadJob, 'kind'>): Promise<ReadReply>
  plan(job: Omit<PlanJob, 'kind'>): Promise<PlanReply>
}

interface Slot {
  readonly worker: Worker
  /** Resolves when the worker has loaded (its start-up is not part of any job's time). */
  readonly ready: Promise<void>
  /** Why the worker ended, once it has. */
  dead: string | undefined
  /** Ends the worker once it has been idle for `idleMs`. */
  idle?: NodeJS.Timeout | undefined
  pending?: { readonly job: number; resolve(reply: ReadReply | PlanReply): void; reject(error: Error): void }
}

/**
 * Worker threads that parse, plan and serialize large bodies (rewrite-worker.ts), so that work
 * never holds the main thread's event loop. At most `threads` run at once, and the bytes waiting
 * for one are bounded, so memory is too: each worker holds one body's working set at a time.
 * Workers start on first use and are replaced when one dies. Not a pool library (piscina's task
 * is one call and one result): a job here keeps its worker, and the body parsed in it, across two
 * calls while the main thread reads the session store in between.
 */
export class RewriteWorkers {
  readonly #settings: PoolSettings
  readonly #data: RewriteWorkerData
  readonly #idle: Slot[] = []
  readonly #waiting: ((slot: Slot) => void)[] = []
  #running = 0
  #queuedBytes = 0
  #jobs = 0
  #closed = false
  #refused = 0
  #failed = 0

  constructor(config: Readonly<Config>, settings: PoolSettings) {
    this.#settings = settings
    this.#data = { config }
  }

  /** For the metrics: bodies waiting for a worker or in one, workers alive, bodies refused at the budget, jobs failed. */
  get queuedBytes(): number {
    return this.#queuedBytes
  }

  get threads(): number {
    return this.#running
  }

  get refused(): number {
    return this.#refused
  }

  get failed(): number {
    return this.#failed
  }

  get budget(): number {
    return this.#settings.maxQueuedBytes
  }

  async run<T>(bytes: number, work: (lease: WorkerLease) => Promise<T>): Promise<T> {
    if (this.#closed) throw new WorkerFailed('rewrite workers are shut down')
    const alone = this.#queuedBytes === 0
    if (!alone && this.#queuedBytes + bytes > this.#settings.maxQueuedBytes) {
      this.#refused++
      throw new WorkersBusy(`rewrite workers hold ${this.#queuedBytes} bytes of bodies (rewriteWorkers.maxQueuedBytes)`)
    }
    this.#queuedBytes += bytes
    try {
      const slot = await this.#take()
      return await this.#lease(slot, work)
    } catch (error) {
      if (error instanceof WorkerFailed) this.#failed++
      throw error
    } finally {
      this.#queuedBytes -= bytes
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    const slots = this.#idle.splice(0)
    await Promise.all(slots.map((slot) => slot.worker.terminate()))
  }

  #take(): Promise<Slot> {
    const idle = this.#idle.pop()
    if (idle) {
      clearTimeout(idle.idle)
      return Promise.resolve(idle)
    }
    if (this.#running < this.#settings.threads) {
      this.#running++
      return Promise.resolve(this.#spawn())
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  async #lease<T>(slot: Slot, work: (lease: WorkerLease) => Promise<T>): Promise<T> {
    const job = ++this.#jobs
    try {
      await slot.ready
    } catch (error) {
      this.#give(slot)
      throw error
    }
    const timer = setTimeout(
      () => this.#kill(slot, `timed out after ${this.#settings.timeoutMs} ms`),
      this.#settings.timeoutMs,
    )
    timer.unref()
    const call = <R>(message: ToRewriteWorker, transfer: ArrayBuffer[]): Promise<R> =>
      this.#call(slot, message, transfer) as Promise<R>
    try {
      return await work({
        // A body in shared memory is shared (a SharedArrayBuffer cannot be transferred); any other moves.
        read: (read) => call({ ...read, kind: 'read', job }, transferable(read.body)),
        plan: (plan) => call({ ...plan, kind: 'plan', job }, []),
      })
    } finally {
      clearTimeout(timer)
      if (!slot.dead) slot.worker.postMessage({ kind: 'end', job } satisfies ToRewriteWorker)
      this.#give(slot)
    }
  }

  #call(slot: Slot, message: ToRewriteWorker, transfer: ArrayBuffer[]): Promise<ReadReply | PlanReply> {
    if (slot.dead) return Promise.reject(new WorkerFailed(`rewrite worker ${slot.dead}`))
    return new Promise((resolve, reject) => {
      slot.pending = { job: message.job, resolve, reject }
      slot.worker.postMessage(message, transfer)
    })
  }

  /** A slot back to the pool: to the next waiting job, or idle; a dead one makes room for a new worker. */
  #give(slot: Slot): void {
    const next = this.#waiting.shift()
    if (slot.dead) {
      if (next) next(this.#spawn())
      else this.#running--
      return
    }
    if (next) next(slot)
    else if (this.#closed) void slot.worker.terminate()
    else this.#rest(slot)
  }

  #rest(slot: Slot): void {
    this.#idle.push(slot)
    slot.idle = setTimeout(() => this.#kill(slot, 'idle'), this.#settings.idleMs)
    slot.idle.unref()
  }

  #spawn(): Slot {
    const worker = startModuleWorker(
      import.meta.url,
      'rewrite-worker',
      this.#data,
      workerLimits(this.#settings.maxHeapBytes),
    )
    const ready = new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve())
      worker.once('exit', (code) => reject(new WorkerFailed(`rewrite worker exited with code ${code} while starting`)))
    })
    ready.catch(() => undefined)
    const slot: Slot = { worker, ready, dead: undefined }
    worker.on('message', (message: FromRewriteWorker | 'ready') => {
      if (message === 'ready') return
      const pending = slot.pending
      if (!pending || pending.job !== message.job) return
      slot.pending = undefined
      if (message.kind === 'done') pending.resolve(message.reply)
      else pending.reject(new WorkerFailed(`rewrite worker failed: ${message.error}`))
    })
    worker.on('error', (error) => this.#kill(slot, `crashed: ${error.message}`))
    worker.on('exit', (code) => this.#kill(slot, `exited with code ${code}`))
    return slot
  }

  #kill(slot: Slot, why: string): void {
    const pending = slot.pending
    slot.pending = undefined
    pending?.reject(new WorkerFailed(`rewrite worker ${why}`))
    if (slot.dead) return
    slot.dead = why
    void slot.worker.terminate()
    // An idle worker that died is dropped now; one in use is dropped when its lease ends.
    const idle = this.#idle.indexOf(slot)
    if (idle >= 0) {
      this.#idle.splice(idle, 1)
      this.#running--
    }
  }
}

function transferable(body: Uint8Array): ArrayBuffer[] {
  return body.buffer instanceof SharedArrayBuffer ? [] : [body.buffer as ArrayBuffer]
}
