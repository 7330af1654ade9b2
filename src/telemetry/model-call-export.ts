import type { Attributes, Meter } from '@opentelemetry/api'
import { ctxgateAttributes } from './ctxgate-attributes.ts'
import type { ExportedCall } from './exported-call.ts'
import type { FinishedSpans } from './finished-spans.ts'
import { genAiAttributes, type ServerAddress } from './genai-attributes.ts'
import { GenAiMetrics } from './genai-metrics.ts'
import { recordModelCallSpan } from './model-call-span.ts'
import { openInferenceAttributes } from './openinference-attributes.ts'
import type { TelemetrySettings } from './telemetry-settings.ts'

/** Where a warning goes: ctxgate's logger, or from the export worker a message to it. */
export interface WarningSink {
  warn(object: object, message: string): void
}

export interface ModelCallExportDeps {
  readonly settings: TelemetrySettings
  /** Each upstream's host and port, by provider name. */
  readonly servers: Readonly<Record<string, ServerAddress>>
  readonly spans: FinishedSpans | undefined
  readonly meter: Meter | undefined
  readonly logger: WarningSink
}

/** Turns each finished model call into its span and GenAI metrics; a failure here is logged, never thrown at the request. */
export class ModelCallExport {
  readonly #deps: ModelCallExportDeps
  readonly #metrics: GenAiMetrics | undefined
  #warned = false

  constructor(deps: ModelCallExportDeps) {
    this.#deps = deps
    this.#metrics = deps.meter ? new GenAiMetrics(deps.meter) : undefined
  }

  record(call: ExportedCall): void {
    // Calls no wire format claimed (model lists, files, …) are not model calls.
    if (call.route === 'passthrough') return
    try {
      const server = this.#deps.servers[call.provider]
      this.#metrics?.record(call, server)
      if (this.#deps.spans) recordModelCallSpan(this.#deps.spans, call, this.#attributes(call, server), server)
    } catch (error) {
      if (this.#warned) return
      this.#warned = true
      this.#deps.logger.warn({ error: (error as Error).message }, 'OpenTelemetry recording failed (reported once)')
    }
  }

  #attributes(call: ExportedCall, server: ServerAddress | undefined): Attributes {
    const { format, latestGenAiOnly } = this.#deps.settings
    if (format === 'genai')
      return Object.assign(genAiAttributes(call, server, { latestOnly: latestGenAiOnly }), ctxgateAttributes(call))
    const openInference = Object.assign(openInferenceAttributes(call), ctxgateAttributes(call))
    return format === 'both'
      ? Object.assign(genAiAttributes(call, server, { latestOnly: latestGenAiOnly }), openInference)
      : openInference
  }
}

/** The upstream URL's host and port (the scheme's default when none is written). */
export function serverAddressOf(url: string): ServerAddress {
  const parsed = new URL(url)
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port)
  return { address: parsed.hostname.replace(/^\[|\]$/g, ''), port }
}
