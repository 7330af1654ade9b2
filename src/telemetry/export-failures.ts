import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import type { WarningSink } from './model-call-export.ts'

/** A collector that stays down is reported once a minute, not once per batch. */
const reportEveryMs = 60_000

interface Exporter<T> {
  export(items: T, done: (result: ExportResult) => void): void
}

/**
 * Wraps an OTLP exporter's `export` so failed batches show in ctxgate's log (the SDK's own
 * diagnostics are silent by default); the batch is dropped either way, as the SDK does.
 */
export function reportingFailures<T, E extends Exporter<T>>(exporter: E, signal: string, logger: WarningSink): E {
  const original = exporter.export.bind(exporter)
  let lastReport = -Infinity
  let failedSince = 0
  exporter.export = (items, done) =>
    original(items, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) {
        failedSince++
        const now = performance.now()
        if (now - lastReport >= reportEveryMs) {
          lastReport = now
          logger.warn(
            { signal, failedBatches: failedSince, error: result.error?.message },
            'OpenTelemetry export failed; the batch was dropped (requests are not affected)',
          )
          failedSince = 0
        }
      }
      done(result)
    })
  return exporter
}
