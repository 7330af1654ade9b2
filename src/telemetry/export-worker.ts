import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { startExportPipeline } from './export-pipeline.ts'
import type { ExportWorkerData, FromExportWorker, ToExportWorker } from './worker-messages.ts'

/**
 * The export worker: the OpenTelemetry SDK's pipeline on a thread of its own, so building spans,
 * the histograms, the OTLP encoding and the HTTP export never take the requests' thread.
 */
const port = parentPort
if (!port) throw new Error('export-worker.ts runs as a worker thread (start-telemetry.ts starts it)')
// The lowest CPU priority, for this thread only (on Linux a thread's nice value is its own,
// setpriority(2)): when the cores are busy, requests run first and export waits.
try {
  setPriority(19)
} catch {
  // Not permitted or not supported here: export runs at the process's priority.
}
const send = (message: FromExportWorker): void => port.postMessage(message)
const { settings, servers } = workerData as ExportWorkerData
const pipeline = startExportPipeline(settings, servers, {
  warn: (object, message) => send({ kind: 'warn', object, message }),
})

port.on('message', (message: ToExportWorker) => {
  switch (message.kind) {
    case 'calls':
      for (const call of message.calls) pipeline.record(call)
      send({ kind: 'done', count: message.calls.length })
      return
    case 'heap':
      ;(globalThis as { gc?: () => void }).gc?.()
      send({ kind: 'heap', bytes: process.memoryUsage().heapUsed })
      return
    case 'shutdown':
      void pipeline.shutdown().finally(() => {
        send({ kind: 'closed' })
        port.close()
      })
  }
})
