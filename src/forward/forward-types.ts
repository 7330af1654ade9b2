import type { OpenStreams } from '../stream/open-streams.ts'
import type { Readable } from 'node:stream'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import type { VirtualClients } from '../session/client-counterfactual.ts'
import type { Config } from '../config/schema.ts'
import type { ModelLabels } from '../metrics/model-labels.ts'
import type { ProxyMetrics } from '../metrics/proxy-metrics.ts'
import type { Accounting, PrepareBody } from '../request/prepared.ts'
import type { ResponseFacts, Usage } from '../model-call/usage.ts'
import type { Provider, WireFormatDefinition } from '../providers/provider-contract.ts'
import type { ModelPrices } from '../billing/prices.ts'
import type { SessionTotalsStore } from '../session/accounting.ts'
import type { Upstreams } from '../providers/registry.ts'
import type { LiveRecorder } from '../live/live-recorder.ts'
import type { ModelCallTelemetry } from '../telemetry/telemetry.ts'
import type { DeadWriteTracker } from '../model-call/dead-writes.ts'

export interface ForwardDeps {
  readonly config: Readonly<Config>
  readonly upstreams: Upstreams
  readonly metrics: ProxyMetrics
  readonly models: ModelLabels
  readonly sessions: SessionTotalsStore
  readonly logger: Logger
  /** State lives in a store other replicas read: what an answer reports must land before the client has it. */
  readonly sharedState: boolean
  /** The live page (/ctxgate/): told about every finished request. */
  readonly live?: LiveRecorder
  /** The event streams being relayed, so a shutdown past its grace can end each with an error event. */
  readonly openStreams?: OpenStreams
  /** The configured price table (`economy.prices`), for billed tokens and dollars. */
  readonly prices?: readonly ModelPrices[]
  /** OpenTelemetry export, when configured (src/telemetry/). */
  readonly telemetry?: ModelCallTelemetry | undefined
  /** Each session's client as it would have run without ctxgate (known clients only). */
  readonly virtualClients?: VirtualClients
  /** Follows each session's cache writes to count the ones never read. */
  readonly deadWrites?: DeadWriteTracker
  /** Whether a body of this size, with these headers, goes upstream before its preparation reads it (read-after-sending.ts). */
  readonly readAfterSending?: ((bodyBytes: number, incoming: IncomingHttpHeaders) => boolean) | undefined
}

/** What forwarding reads of the client's request: a fastify request, or the model-call fast path's own (app/model-call-fast-path.ts). */
export interface ClientRequestView {
  readonly id: string
  readonly method: string
  /** Path and query as the client sent them. */
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly raw: IncomingMessage
}

/** The client's response: forwarding writes it itself, so fastify is told to keep out (hijack). */
export interface ClientReplyView {
  readonly raw: ServerResponse
  hijack(): void
}

export interface ForwardInput {
  readonly request: ClientRequestView
  readonly reply: ClientReplyView
  readonly provider: Provider
  /** The wire format a route claimed the call for; absent for passthrough calls. */
  readonly format?: WireFormatDefinition | undefined
  readonly body: Buffer | Readable | null
  readonly prepare?: PrepareBody | undefined
}

/** What the last step of a forwarded request found; the request's record (metrics, log line) is made from it. */
export interface ForwardResult {
  readonly status: number
  /** complete, rejected, client_closed, upstream_failed, upstream_unreachable or internal_error. */
  readonly outcome: string
  readonly attempts: number
  readonly upstreamStatus?: number
  readonly upstreamRequestId?: string
  readonly bytesOut?: number
  /** Fields for the log line (the rewrite report). */
  readonly log?: Readonly<Record<string, unknown>>
  readonly accounting?: Accounting
  readonly usage?: Usage
  readonly error?: string
  /** In ctxgate between the first upstream byte and the first client byte. */
  readonly responseOverheadMs?: number
  readonly ttfbMs?: number
  /** The answer was an event stream. */
  readonly streamed?: boolean
  /** The first request was refused for its length and a smaller one sent instead. */
  readonly refitted?: boolean
  /** The answer's id, model and finish reasons, when its reader saw them. */
  readonly response?: ResponseFacts | undefined
}

/** What the request side noted for the log line and the accounting, whatever happens next. */
export interface RequestNotes {
  readonly log?: Readonly<Record<string, unknown>> | undefined
  readonly accounting?: Accounting | undefined
  /** The stage that failed and was skipped: the client's request went on unchanged. */
  readonly failOpen?: string
  readonly error?: string
}
