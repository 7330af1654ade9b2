import type { RequestRecord, TraceContextHeaders } from '../request/request-record.ts'

/** Where a finished model call goes besides Prometheus: its span and its GenAI metrics (OTLP). */
export interface ModelCallTelemetry {
  /** `modelLabel` is the bounded model label Prometheus uses, so both sets of metrics carry the same series. */
  recordModelCall(record: RequestRecord, modelLabel: string): void
}

export interface Telemetry extends ModelCallTelemetry {
  /** Sends what is queued (bounded by the exporters' timeouts) and stops. */
  shutdown(): Promise<void>
}

/** The W3C trace context the client sent (https://www.w3.org/TR/trace-context/), for the span's parent. */
export type { TraceContextHeaders }

/** Only the two trace context headers, so a record never holds the client's other headers (keys among them). */
export function traceContextOf(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): TraceContextHeaders | undefined {
  const traceparent = headers['traceparent']
  const tracestate = headers['tracestate']
  if (traceparent === undefined) return undefined
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate }
}
