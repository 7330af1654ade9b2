import {
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
} from '@opentelemetry/api'
import { hrTimeDuration, millisToHrTime } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import {
  RandomIdGenerator,
  SamplingDecision,
  type ReadableSpan,
  type Sampler,
  type SpanProcessor,
  type TimedEvent,
} from '@opentelemetry/sdk-trace-base'

/** A span of a call that has already ended: its times are epoch milliseconds. */
export interface FinishedSpan {
  readonly name: string
  readonly kind: SpanKind
  readonly context: SpanContext
  readonly parent?: SpanContext | undefined
  readonly startMs: number
  readonly endMs: number
  readonly attributes: Attributes
  readonly events?: readonly { readonly name: string; readonly atMs: number; readonly attributes?: Attributes }[]
  readonly error?: string | undefined
}

/**
 * Spans made after the fact, handed to the SDK's span processor (BatchSpanProcessor) as the
 * ReadableSpans its exporters read. A model call's span is built once its record is finished, so
 * the SDK's live-span machinery (a Tracer's Span, re-validating every attribute on each call) would
 * only add CPU per request; sampling and ids are still the SDK's (OTEL_TRACES_SAMPLER).
 */
export class FinishedSpans {
  readonly #processor: SpanProcessor
  readonly #sampler: Sampler
  readonly #resource: Resource
  readonly #ids = new RandomIdGenerator()
  readonly #scope = { name: 'ctxgate' }

  constructor(processor: SpanProcessor, sampler: Sampler, resource: Resource) {
    this.#processor = processor
    this.#sampler = sampler
    this.#resource = resource
  }

  /** A sampled span's context (a new trace, or a child of the client's span in `parent`); undefined when sampled out. */
  begin(parent: Context, name: string, kind: SpanKind, attributes: Attributes): SpanContext | undefined {
    const parentSpan = trace.getSpanContext(parent)
    const traceId =
      parentSpan && trace.isSpanContextValid(parentSpan) ? parentSpan.traceId : this.#ids.generateTraceId()
    const decision = this.#sampler.shouldSample(parent, traceId, name, kind, attributes, [])
    if (decision.decision !== SamplingDecision.RECORD_AND_SAMPLED) return undefined
    const traceState = decision.traceState ?? parentSpan?.traceState
    return { traceId, spanId: this.#ids.generateSpanId(), traceFlags: 1, ...(traceState ? { traceState } : {}) }
  }

  /** A child's context in the same trace. */
  child(of: SpanContext): SpanContext {
    return { ...of, spanId: this.#ids.generateSpanId() }
  }

  end(span: FinishedSpan): void {
    const startTime = millisToHrTime(span.startMs)
    const endTime = millisToHrTime(Math.max(span.startMs, span.endMs))
    const status: SpanStatus = span.error
      ? { code: SpanStatusCode.ERROR, message: span.error }
      : { code: SpanStatusCode.UNSET }
    const events: TimedEvent[] = (span.events ?? []).map((event) => ({
      name: event.name,
      time: millisToHrTime(event.atMs),
      ...(event.attributes ? { attributes: event.attributes } : {}),
    }))
    const readable: ReadableSpan = {
      name: span.name,
      kind: span.kind,
      spanContext: () => span.context,
      ...(span.parent ? { parentSpanContext: span.parent } : {}),
      startTime,
      endTime,
      duration: hrTimeDuration(startTime, endTime),
      status,
      attributes: span.attributes,
      links: [],
      events,
      ended: true,
      resource: this.#resource,
      instrumentationScope: this.#scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    }
    this.#processor.onEnd(readable)
  }

  shutdown(): Promise<void> {
    return this.#processor.shutdown()
  }
}
