import { startModuleWorker } from '../util/start-worker.ts'
import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { Config } from '../config/schema.ts'
import type { RequestRecord } from '../request/request-record.ts'
import { exportedCallOf, type ExportedCall } from './exported-call.ts'
import type { ServerAddress } from './genai-attributes.ts'
import { serverAddressOf } from './model-call-export.ts'
import type { TelemetrySettings } from './telemetry-settings.ts'
import type { Telemetry } from './telemetry.ts'
import type { ExportWorkerData, FromExportWorker, ToExportWorker } from './worker-messages.ts'

/** Calls are handed to the worker in batches: one message per this many calls, or per this long. */
const batchCalls = 128
const batchDelayMs = 50
/** Dropped calls are reported once a minute, as failed exports are. */
const reportEveryMs = 60_000

/**
 * OpenTelemetry export with the SDK in a worker thread (export-worker.ts). The requests' thread
 * only copies each finished record's facts into a batch; the spans, histograms, OTLP encoding and
 * HTTP export happen in the worker. Calls waiting for the worker are bounded by the span queue's
 * size (OTEL_BSP_MAX_QUEUE_SIZE), so a worker that falls behind costs dropped spans, not memory.
 */
export function startTelemetry(settings: TelemetrySettings, config: Readonly<Config>, logger: Logger): WorkerTelemetry {
  const servers: Record<string, ServerAddress> = Object.fromEntries(
    Object.entries(config.upstreams).map(([name, upstream]) => [name, serverAddressOf(upstream.url)]),
  )
  return new WorkerTelemetry(
    startModuleWorker(import.meta.url, 'export-worker', { settings, servers } satisfies ExportWorkerData),
    settings.batch.maxQueueSize,
    logger,
  )
}

export class WorkerTelemetry implements Telemetry {
  readonly #worker: Worker
  readonly #logger: Logger
  readonly #bound: number
  #batch: ExportedCall[] = []
  #timer: NodeJS.Timeout | undefined
  /** Calls posted to the worker and not yet handed to the SDK. */
  #inFlight = 0
  #dropped = 0
  #droppedTotal = 0
  #lastDropReport = -Infinity
  #alive = true
  #heapWaiters: ((bytes: number) => void)[] = []
  #closed: Promise<void>

  constructor(worker: Worker, bound: number, logger: Logger) {
    this.#worker = worker
    this.#bound = bound
    this.#logger = logger
    this.#closed = new Promise((resolve) =>
      worker.once('exit', () => {
        this.#alive = false
        resolve()
      }),
    )
    worker.on('message', (message: FromExportWorker) => this.#receive(message))
    worker.on('error', (error) => {
      this.#alive = false
      logger.warn(
        { error: error.message },
        'OpenTelemetry export worker failed; export is off (requests are not affected)',
      )
    })
  }

  recordModelCall(record: RequestRecord, modelLabel: string): void {
    // Calls no wire format claimed (model lists, files, …) are not model calls.
    if (!this.#alive || record.route === 'passthrough') return
    if (this.#inFlight + this.#batch.length >= this.#bound) return this.#drop()
    this.#batch.push(exportedCallOf(record, modelLabel))
    if (this.#batch.length >= batchCalls) this.#post()
    else this.#timer ??= setTimeout(() => this.#post(), batchDelayMs).unref()
  }

  async shutdown(): Promise<void> {
    if (!this.#alive) return
    this.#post()
    this.#alive = false
    this.#worker.ref()
    this.#send({ kind: 'shutdown' })
    await this.#closed
  }

  /** The worker's heap in use, for bench/otel-queue-memory.ts. */
  workerHeapBytes(): Promise<number> {
    return new Promise((resolve) => {
      this.#heapWaiters.push(resolve)
      this.#send({ kind: 'heap' })
    })
  }

  #post(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#batch.length === 0) return
    const calls = this.#batch
    this.#batch = []
    this.#inFlight += calls.length
    this.#send({ kind: 'calls', calls })
  }

  #send(message: ToExportWorker): void {
    try {
      // oxlint-disable-next-line unicorn/require-post-message-target-origin -- a worker thread, not a window
      this.#worker.postMessage(message)
    } catch (error) {
      this.#alive = false
      this.#logger.warn({ error: (error as Error).message }, 'OpenTelemetry export worker unreachable; export is off')
    }
  }

  #receive(message: FromExportWorker): void {
    switch (message.kind) {
      case 'done':
        this.#inFlight -= message.count
        return
      case 'warn':
        this.#logger.warn(message.object, message.message)
        return
      case 'heap':
        this.#heapWaiters.shift()?.(message.bytes)
        return
      case 'closed':
        void this.#worker.terminate()
    }
  }

  /** Calls recorded and not yet handed to the SDK in the worker. */
  get pendingCalls(): number {
    return this.#inFlight + this.#batch.length
  }

  /** Calls not exported because the worker was behind by the queue's bound, since start. */
  get droppedCalls(): number {
    return this.#droppedTotal
  }

  #drop(): void {
    this.#dropped++
    this.#droppedTotal++
    const now = performance.now()
    if (now - this.#lastDropReport < reportEveryMs) return
    this.#lastDropReport = now
    this.#logger.warn(
      { droppedCalls: this.#dropped },
      'OpenTelemetry export is behind; calls past the queue bound were not exported (requests are not affected)',
    )
    this.#dropped = 0
  }
}
