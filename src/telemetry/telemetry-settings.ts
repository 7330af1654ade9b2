import { z } from 'zod'
import { ConfigError } from '../errors.ts'

/**
 * OpenTelemetry export, read from the standard OTEL_* variables (and CTXGATE_OTEL_FORMAT) once at
 * start-up. Off unless an OTLP endpoint is set. docs/opentelemetry.md lists every variable.
 */
export interface TelemetrySettings {
  readonly traces: OtlpTarget | undefined
  readonly metrics: OtlpTarget | undefined
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
  readonly sampler: SamplerSetting
  /** Which attribute sets a span carries: the GenAI conventions, OpenInference's (Phoenix), or both. */
  readonly format: 'genai' | 'openinference' | 'both'
  /** `gen_ai_latest_experimental` in OTEL_SEMCONV_STABILITY_OPT_IN: leave out the v1.36 names (`gen_ai.system`). */
  readonly latestGenAiOnly: boolean
  readonly metricIntervalMs: number
  /** BatchSpanProcessor limits: the most spans a collector that is down can cost. */
  readonly batch: {
    readonly maxQueueSize: number
    readonly maxExportBatchSize: number
    readonly scheduledDelayMs: number
    readonly exportTimeoutMs: number
  }
}

export interface OtlpTarget {
  /** Full URL of the signal's path (`…/v1/traces`, `…/v1/metrics`). */
  readonly url: string
  readonly protocol: 'http/protobuf' | 'http/json'
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

export type SamplerSetting =
  | { readonly kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { readonly kind: 'traceidratio' | 'parentbased_traceidratio'; readonly ratio: number }

type Env = Readonly<Record<string, string | undefined>>

const endpoint = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
const protocol = z.enum(['http/protobuf', 'http/json'], {
  error: 'must be http/protobuf or http/json (ctxgate does not export over gRPC)',
})
const positiveInt = z.coerce.number().int().positive()
const samplerKinds = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const

// The SDK's defaults (OpenTelemetry environment variable specification), stated so the bound is visible here.
const defaults = {
  timeoutMs: 10_000,
  metricIntervalMs: 60_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMs: 5000,
  exportTimeoutMs: 30_000,
}

/** The settings, or undefined when export is off; every problem at once in a ConfigError. */
export function loadTelemetrySettings(env: Env): TelemetrySettings | undefined {
  const problems: string[] = []
  const read = <T>(name: string, schema: z.ZodType<T>, fallback: T): T => {
    const raw = env[name]?.trim()
    if (raw === undefined || raw === '') return fallback
    const parsed = schema.safeParse(raw)
    if (parsed.success) return parsed.data
    problems.push(`${name}: ${parsed.error.issues[0]?.message ?? 'invalid'} (got ${JSON.stringify(raw)})`)
    return fallback
  }
  if (read('OTEL_SDK_DISABLED', z.enum(['true', 'false']), 'false') === 'true') return finish(problems, undefined)
  const settings: TelemetrySettings = {
    traces: target(env, 'TRACES', read),
    metrics: target(env, 'METRICS', read),
    serviceName: read('OTEL_SERVICE_NAME', z.string().min(1), 'ctxgate'),
    resourceAttributes: keyValueList(env['OTEL_RESOURCE_ATTRIBUTES'], 'OTEL_RESOURCE_ATTRIBUTES', problems),
    sampler: samplerOf(read),
    format: read('CTXGATE_OTEL_FORMAT', z.enum(['genai', 'openinference', 'both']), 'genai'),
    latestGenAiOnly: (env['OTEL_SEMCONV_STABILITY_OPT_IN'] ?? '')
      .split(',')
      .some((token) => token.trim() === 'gen_ai_latest_experimental'),
    metricIntervalMs: read('OTEL_METRIC_EXPORT_INTERVAL', positiveInt, defaults.metricIntervalMs),
    batch: {
      maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE', positiveInt, defaults.maxQueueSize),
      maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', positiveInt, defaults.maxExportBatchSize),
      scheduledDelayMs: read('OTEL_BSP_SCHEDULE_DELAY', positiveInt, defaults.scheduledDelayMs),
      exportTimeoutMs: read('OTEL_BSP_EXPORT_TIMEOUT', positiveInt, defaults.exportTimeoutMs),
    },
  }
  if (settings.batch.maxExportBatchSize > settings.batch.maxQueueSize)
    problems.push('OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not be larger than OTEL_BSP_MAX_QUEUE_SIZE')
  const headerProblems: string[] = []
  keyValueList(env['OTEL_EXPORTER_OTLP_HEADERS'], 'OTEL_EXPORTER_OTLP_HEADERS', headerProblems)
  problems.push(...headerProblems)
  return finish(problems, settings.traces || settings.metrics ? settings : undefined)
}

function finish(problems: string[], settings: TelemetrySettings | undefined): TelemetrySettings | undefined {
  if (problems.length > 0) throw new ConfigError([...new Set(problems)])
  return settings
}

type Reader = <T>(name: string, schema: z.ZodType<T>, fallback: T) => T

/** One signal's endpoint: its own variable (used as is) or the shared one plus `/v1/<signal>`; `none` exporter turns it off. */
function target(env: Env, signal: 'TRACES' | 'METRICS', read: Reader): OtlpTarget | undefined {
  const exporter = read(`OTEL_${signal}_EXPORTER`, z.enum(['otlp', 'none']), 'otlp')
  const own = read(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`, endpoint, '')
  const shared = read('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint, '')
  if (exporter === 'none' || (own === '' && shared === '')) return undefined
  const problems: string[] = []
  const headers = {
    ...keyValueList(env['OTEL_EXPORTER_OTLP_HEADERS'], '', problems),
    ...keyValueList(env[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`], `OTEL_EXPORTER_OTLP_${signal}_HEADERS`, problems),
  }
  return {
    // The shared endpoint is a base: the specification appends the signal's path to it.
    url: own !== '' ? own : `${shared.replace(/\/+$/, '')}/v1/${signal.toLowerCase()}`,
    protocol: read(
      `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`,
      protocol,
      read('OTEL_EXPORTER_OTLP_PROTOCOL', protocol, 'http/protobuf'),
    ),
    headers,
    timeoutMs: read(
      `OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`,
      positiveInt,
      read('OTEL_EXPORTER_OTLP_TIMEOUT', positiveInt, defaults.timeoutMs),
    ),
  }
}

function samplerOf(read: Reader): SamplerSetting {
  const kind = read('OTEL_TRACES_SAMPLER', z.enum(samplerKinds), 'parentbased_always_on')
  if (kind !== 'traceidratio' && kind !== 'parentbased_traceidratio') return { kind }
  const ratio = read('OTEL_TRACES_SAMPLER_ARG', z.coerce.number().min(0).max(1), 1)
  return { kind, ratio }
}

/** `key=value,key2=value2` with percent-encoded values (W3C Baggage format, as the specification says). */
function keyValueList(raw: string | undefined, name: string, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  if (raw === undefined || raw.trim() === '') return out
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue
    const equals = entry.indexOf('=')
    const key = equals > 0 ? entry.slice(0, equals).trim() : ''
    if (key === '') {
      if (name) problems.push(`${name}: entry ${JSON.stringify(entry.trim())} is not key=value`)
      continue
    }
    try {
      out[key] = decodeURIComponent(entry.slice(equals + 1).trim())
    } catch {
      if (name) problems.push(`${name}: the value of ${key} is not valid percent-encoding`)
    }
  }
  return out
}
