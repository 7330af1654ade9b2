import type { ExportedCall } from './exported-call.ts'
import type { ServerAddress } from './genai-attributes.ts'
import type { TelemetrySettings } from './telemetry-settings.ts'

/** What the export worker starts with. */
export interface ExportWorkerData {
  readonly settings: TelemetrySettings
  readonly servers: Readonly<Record<string, ServerAddress>>
}

/** Request thread → export worker. */
export type ToExportWorker =
  | { readonly kind: 'calls'; readonly calls: readonly ExportedCall[] }
  | { readonly kind: 'shutdown' }
  /** The worker's heap in use (after a full GC when the process runs with --expose-gc): for bench/otel-queue-memory.ts. */
  | { readonly kind: 'heap' }

/** Export worker → request thread. */
export type FromExportWorker =
  /** A batch of calls was handed to the SDK: the request thread may send that many more. */
  | { readonly kind: 'done'; readonly count: number }
  | { readonly kind: 'warn'; readonly object: object; readonly message: string }
  | { readonly kind: 'heap'; readonly bytes: number }
  | { readonly kind: 'closed' }
