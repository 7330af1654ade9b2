import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOnSampler, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import type { RequestRecord } from '../../src/request/request-record.ts'
import { exportedCallOf } from '../../src/telemetry/exported-call.ts'
import { FinishedSpans } from '../../src/telemetry/finished-spans.ts'
import { recordModelCallSpan } from '../../src/telemetry/model-call-span.ts'
import { socketRoute } from '../../src/providers/registry.ts'

const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

const record = (overrides: Partial<RequestRecord> = {}): RequestRecord => ({
  route: 'anthropic-messages',
  provider: 'anthropic',
  status: 200,
  outcome: 'complete',
  upstreamStatus: 200,
  attempts: 1,
  retries: [],
  durationMs: 40,
  startedAt: 1_000,
  upstreamAttempts: [{ startedAt: 1_002, endedAt: 1_010, status: 200 }],
  traceContext: { traceparent },
  ...overrides,
})

/** The spans FinishedSpans hands to its processor, in order. */
function spansOf(...records: RequestRecord[]): ReadableSpan[] {
  const ended: ReadableSpan[] = []
  const processor: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => void ended.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  }
  const spans = new FinishedSpans(processor, new AlwaysOnSampler(), resourceFromAttributes({}))
  for (const one of records) recordModelCallSpan(spans, exportedCallOf(one, 'm'), {}, undefined)
  return ended
}

describe("a model call's export copy", () => {
  it('carries epoch times (the worker has another performance.now() origin) and the trace context as one string each', () => {
    const call = exportedCallOf(
      record({ traceContext: { traceparent: [traceparent, 'second'], tracestate: ['a=1', 'b=2'] } }),
      'claude-sonnet-4-5',
    )
    expect(call.startMs).toBeCloseTo(performance.timeOrigin + 1_000, 3)
    expect(call.endMs - call.startMs).toBeCloseTo(40, 3)
    expect(call.upstreamAttempts[0]?.endedAt).toBeCloseTo(performance.timeOrigin + 1_010, 3)
    expect(call.traceparent).toBe(traceparent)
    expect(call.tracestate).toBe('a=1,b=2')
    expect(call.modelLabel).toBe('claude-sonnet-4-5')
    // Plain data only: it crosses to the worker by structured clone.
    expect(structuredClone(call)).toEqual(call)
  })
})

describe("a model call's spans", () => {
  it('has no child span for a single upstream attempt: the call span holds its status', () => {
    const [span, ...rest] = spansOf(record())
    expect(rest).toHaveLength(0)
    expect(span?.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736')
    expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7')
    expect(span?.events.map((event) => [event.name, event.attributes])).toEqual([
      ['ctxgate.upstream.first_byte', { 'http.response.status_code': 200 }],
    ])
  })

  it('shows each attempt as a child when there were retries, on HTTP and on a socket', () => {
    const attempts = [
      { startedAt: 1_002, endedAt: 1_004, status: 529, retry: 'status_529' as const },
      { startedAt: 1_006, endedAt: 1_010, status: 200 },
    ]
    const http = spansOf(record({ attempts: 2, retries: ['status_529'], upstreamAttempts: attempts }))
    expect(http.map((span) => span.name)).toEqual(['POST', 'POST', 'chat'])
    const [retried, resent, call] = http
    expect(retried?.attributes).toMatchObject({ 'http.response.status_code': 529, 'error.type': '529' })
    expect(resent?.attributes['http.request.resend_count']).toBe(1)
    expect(retried?.parentSpanContext?.spanId).toBe(call?.spanContext().spanId)
    const socket = spansOf(record({ route: socketRoute, attempts: 2, upstreamAttempts: attempts }))
    expect(socket.map((span) => span.name)).toEqual(['response.create', 'response.create', 'chat'])
  })
})
