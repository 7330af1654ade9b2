import { ROOT_CONTEXT, type Context, type TextMapGetter } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import type { TraceContextHeaders } from './telemetry.ts'

const propagator = new W3CTraceContextPropagator()

const headerGetter: TextMapGetter<TraceContextHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (key === 'traceparent' || key === 'tracestate' ? carrier[key] : undefined),
}

/** The client's span as the parent (W3C Trace Context); the root context when it sent none or a malformed one. */
export function parentContextOf(headers: TraceContextHeaders | undefined): Context {
  if (!headers) return ROOT_CONTEXT
  return propagator.extract(ROOT_CONTEXT, headers, headerGetter)
}
