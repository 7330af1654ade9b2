import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors.ts'
import { loadTelemetrySettings } from '../../src/telemetry/telemetry-settings.ts'

const problemsOf = (env: Record<string, string>): readonly string[] => {
  try {
    loadTelemetrySettings(env)
  } catch (error) {
    if (error instanceof ConfigError) return error.issues
    throw error
  }
  return []
}

describe('OpenTelemetry settings from the OTEL_* variables', () => {
  it('is off unless an endpoint is set, and off when the SDK is disabled', () => {
    expect(loadTelemetrySettings({})).toBeUndefined()
    expect(loadTelemetrySettings({ OTEL_SERVICE_NAME: 'x', CTXGATE_OTEL_FORMAT: 'both' })).toBeUndefined()
    expect(
      loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined()
  })

  it('appends each signal path to the shared endpoint; a signal endpoint is used as written', () => {
    const settings = loadTelemetrySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/otel/',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:9000/custom',
    })
    expect(settings?.traces?.url).toBe('http://127.0.0.1:4318/otel/v1/traces')
    expect(settings?.metrics?.url).toBe('http://127.0.0.1:9000/custom')
    expect(settings?.traces?.protocol).toBe('http/protobuf')
    expect(settings?.serviceName).toBe('ctxgate')
    expect(settings?.sampler).toEqual({ kind: 'parentbased_always_on' })
    expect(settings?.format).toBe('genai')
    expect(settings?.latestGenAiOnly).toBe(false)
    expect(settings?.batch.maxQueueSize).toBe(2048)
  })

  it('turns one signal off with its exporter set to none', () => {
    const settings = loadTelemetrySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_METRICS_EXPORTER: 'none',
    })
    expect(settings?.traces).toBeDefined()
    expect(settings?.metrics).toBeUndefined()
  })

  it('reads headers in the baggage format, percent-decoded, signal headers over shared ones', () => {
    const settings = loadTelemetrySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20abc%3D,x-team=a',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=b',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_SEMCONV_STABILITY_OPT_IN: 'http, gen_ai_latest_experimental',
    })
    expect(settings?.traces?.headers).toEqual({ Authorization: 'Basic abc=', 'x-team': 'b' })
    expect(settings?.metrics?.headers).toEqual({ Authorization: 'Basic abc=', 'x-team': 'a' })
    expect(settings?.traces?.protocol).toBe('http/json')
    expect(settings?.sampler).toEqual({ kind: 'parentbased_traceidratio', ratio: 0.25 })
    expect(settings?.latestGenAiOnly).toBe(true)
  })

  it('lists every bad value at once, and never echoes a header value', () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER: 'jaeger_remote',
      OTEL_TRACES_SAMPLER_ARG: '2',
      CTXGATE_OTEL_FORMAT: 'zipkin',
      OTEL_BSP_MAX_QUEUE_SIZE: '-1',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%ZZsecret-value,novalue',
    })
    expect(problems.join('\n')).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT: must be an http/)
    expect(problems.join('\n')).toMatch(/OTEL_TRACES_SAMPLER: /)
    expect(problems.join('\n')).toMatch(/CTXGATE_OTEL_FORMAT: /)
    expect(problems.join('\n')).toMatch(/OTEL_BSP_MAX_QUEUE_SIZE: /)
    expect(problems.join('\n')).toMatch(/OTEL_EXPORTER_OTLP_HEADERS: the value of Authorization is not valid/)
    expect(problems.join('\n')).toMatch(/"novalue" is not key=value/)
    expect(problems.join('\n')).not.toContain('secret-value')
  })

  it('refuses gRPC with a message that says which protocols work', () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    })
    expect(
      problems.some((problem) => /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json/.test(problem)),
    ).toBe(true)
  })
})
