import type { Attributes, Meter } from '@opentelemetry/api'
import type { Logger } from 'pino'
import type { Config } from '../config/schema.ts'
import type { RequestRecord } from '../request/request-record.ts'
import { ctxgateAttributes } from './ctxgate-attributes.ts'
import type { FinishedSpans } from './finished-spans.ts'
import { genAiAttributes, type ServerAddress } from './genai-attributes.ts'
import { GenAiMetrics } from './genai-metrics.ts'
import { recordModelCallSpan } from './model-call-span.ts'
import { openInferenceAttributes } from './openinference-attributes.ts'
import type { TelemetrySettings } from './telemetry-settings.ts'

export interface ModelCallExportDeps {
  readonly settings: TelemetrySettings
  readonly config: Readonly<Config>
  readonly spans: FinishedSpans | undefined
  readonly meter: Meter | undefined
  readonly logger: Logger
}

/** Turns each finished model call into its span and GenAI metrics; a failure here is logged, never thrown at the request. */
export class ModelCallExport {
  readonly #deps: ModelCallExportDeps
  readonly #metrics: GenAiMetrics | undefined
  readonly #servers: ReadonlyMap<string, ServerAddress>
  #warned = false

  constructor(deps: ModelCallExportDeps) {
    this.#deps = deps
    this.#metrics = deps.meter ? new GenAiMetrics(deps.meter) : undefined
    this.#servers = new Map(
      Object.entries(deps.config.upstreams).map(([name, upstream]) => [name, serverAddressOf(upstream.url)]),
    )
  }

  record(record: RequestRecord, modelLabel: string): void {
    // Calls no wire format claimed (model lists, files, …) are not model calls.
    if (record.route === 'passthrough') return
    try {
      const server = this.#servers.get(record.provider)
      this.#metrics?.record(record, modelLabel, server)
      if (this.#deps.spans) recordModelCallSpan(this.#deps.spans, record, this.#attributes(record, server), server)
    } catch (error) {
      if (this.#warned) return
      this.#warned = true
      this.#deps.logger.warn({ error: (error as Error).message }, 'OpenTelemetry recording failed (reported once)')
    }
  }

  #attributes(record: RequestRecord, server: ServerAddress | undefined): Attributes {
    const { format, latestGenAiOnly } = this.#deps.settings
    return {
      ...(format !== 'openinference' ? genAiAttributes(record, server, { latestOnly: latestGenAiOnly }) : {}),
      ...(format !== 'genai' ? openInferenceAttributes(record) : {}),
      ...ctxgateAttributes(record),
    }
  }
}

/** The upstream URL's host and port (the scheme's default when none is written). */
export function serverAddressOf(url: string): ServerAddress {
  const parsed = new URL(url)
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port)
  return { address: parsed.hostname.replace(/^\[|\]$/g, ''), port }
}
