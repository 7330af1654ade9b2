import type { Meter } from '@opentelemetry/api'
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { reportingFailures } from './export-failures.ts'
import type { ExportedCall } from './exported-call.ts'
import { FinishedSpans } from './finished-spans.ts'
import type { ServerAddress } from './genai-attributes.ts'
import { ModelCallExport, type WarningSink } from './model-call-export.ts'
import { samplerFor } from './sampler.ts'
import type { OtlpTarget, TelemetrySettings } from './telemetry-settings.ts'

const instrumentationScope = 'ctxgate'

export interface ExportPipeline {
  record(call: ExportedCall): void
  /** Sends what is queued (bounded by the exporters' timeouts) and stops. */
  shutdown(): Promise<void>
}

/**
 * The OpenTelemetry SDK's pipeline (nothing registered globally), run in the export worker: spans
 * leave through a BatchSpanProcessor, whose queue bounds what a collector that is down can cost
 * (spans past it are dropped), metrics through a MeterProvider's periodic reader.
 */
export function startExportPipeline(
  settings: TelemetrySettings,
  servers: Readonly<Record<string, ServerAddress>>,
  logger: WarningSink,
): ExportPipeline {
  const resource = resourceFromAttributes({
    ...settings.resourceAttributes,
    'service.name': settings.serviceName,
  })
  const spans = settings.traces
    ? new FinishedSpans(
        new BatchSpanProcessor(reportingFailures(traceExporter(settings.traces), 'traces', logger), {
          maxQueueSize: settings.batch.maxQueueSize,
          maxExportBatchSize: settings.batch.maxExportBatchSize,
          scheduledDelayMillis: settings.batch.scheduledDelayMs,
          exportTimeoutMillis: settings.batch.exportTimeoutMs,
        }),
        samplerFor(settings.sampler),
        resource,
      )
    : undefined
  const meterProvider = settings.metrics
    ? new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter: reportingFailures(metricExporter(settings.metrics), 'metrics', logger),
            exportIntervalMillis: settings.metricIntervalMs,
            exportTimeoutMillis: Math.min(settings.metrics.timeoutMs, settings.metricIntervalMs),
          }),
        ],
      })
    : undefined
  const meter: Meter | undefined = meterProvider?.getMeter(instrumentationScope)
  const exported = new ModelCallExport({ settings, servers, spans, meter, logger })
  return {
    record: (call) => exported.record(call),
    shutdown: async () => {
      await Promise.allSettled([spans?.shutdown(), meterProvider?.shutdown()])
    },
  }
}

function traceExporter(target: OtlpTarget): ProtoTraceExporter | JsonTraceExporter {
  const options = { url: target.url, headers: { ...target.headers }, timeoutMillis: target.timeoutMs }
  return target.protocol === 'http/json' ? new JsonTraceExporter(options) : new ProtoTraceExporter(options)
}

function metricExporter(target: OtlpTarget): ProtoMetricExporter | JsonMetricExporter {
  const options = { url: target.url, headers: { ...target.headers }, timeoutMillis: target.timeoutMs }
  return target.protocol === 'http/json' ? new JsonMetricExporter(options) : new ProtoMetricExporter(options)
}
