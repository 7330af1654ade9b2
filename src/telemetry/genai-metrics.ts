import type { Attributes, Histogram, Meter } from '@opentelemetry/api'
import { tokenBuckets } from '../model-call/token-buckets.ts'
import { promptTokensOf } from '../model-call/usage.ts'
import type { ExportedCall } from './exported-call.ts'
import { errorTypeOf, operationName, type ServerAddress } from './genai-attributes.ts'

/** gen_ai.client.operation.duration's ExplicitBucketBoundaries (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/). */
const durationBuckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
/** gen_ai.client.operation.time_to_first_chunk's boundaries, same page. */
const firstChunkBuckets = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.75,
  1, 2, 5,
]

/**
 * The GenAI client metrics, exported over OTLP from the same record as Prometheus's: token usage
 * counts input with the cached tokens (as gen_ai_client_token_usage does), the model is the same
 * bounded label, duration is the whole call and the first chunk the upstream's first byte.
 */
export class GenAiMetrics {
  readonly #tokens: Histogram
  readonly #duration: Histogram
  readonly #firstChunk: Histogram
  readonly #series = new Map<string, Series>()

  constructor(meter: Meter) {
    this.#tokens = meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Number of input and output tokens used.',
      advice: { explicitBucketBoundaries: tokenBuckets },
    })
    this.#duration = meter.createHistogram('gen_ai.client.operation.duration', {
      unit: 's',
      description: 'GenAI operation duration.',
      advice: { explicitBucketBoundaries: durationBuckets },
    })
    this.#firstChunk = meter.createHistogram('gen_ai.client.operation.time_to_first_chunk', {
      unit: 's',
      description: 'Time to receive the first chunk of a streamed answer.',
      advice: { explicitBucketBoundaries: firstChunkBuckets },
    })
  }

  record(record: ExportedCall, server: ServerAddress | undefined): void {
    const errorType = errorTypeOf(record)
    const series = this.#seriesOf(record, server, errorType)
    this.#duration.record(record.durationMs / 1000, series.duration)
    if (record.streamed && record.ttfbMs !== undefined) this.#firstChunk.record(record.ttfbMs / 1000, series.base)
    const usage = record.usage
    if (!usage) return
    this.#tokens.record(promptTokensOf(usage), series.input)
    this.#tokens.record(usage.outputTokens, series.output)
  }

  /** One set of attribute objects per series (providers, model labels and error types are all bounded), not four per call. */
  #seriesOf(record: ExportedCall, server: ServerAddress | undefined, errorType: string | undefined): Series {
    const key = `${record.provider}\n${record.modelLabel}\n${errorType ?? ''}`
    const known = this.#series.get(key)
    if (known) return known
    const base: Attributes = {
      'gen_ai.operation.name': operationName,
      'gen_ai.provider.name': record.provider,
      'gen_ai.request.model': record.modelLabel,
      ...(server ? { 'server.address': server.address, 'server.port': server.port } : {}),
    }
    const series: Series = {
      base,
      duration: errorType ? { ...base, 'error.type': errorType } : base,
      input: { ...base, 'gen_ai.token.type': 'input' },
      output: { ...base, 'gen_ai.token.type': 'output' },
    }
    this.#series.set(key, series)
    return series
  }
}

interface Series {
  readonly base: Attributes
  readonly duration: Attributes
  readonly input: Attributes
  readonly output: Attributes
}
