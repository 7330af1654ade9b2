import { reportRequest, type ReportDeps } from '../forward/report-request.ts'
import type { RequestRecord } from '../request/request-record.ts'
import type { Usage, UsageReader } from '../model-call/usage.ts'
import type { Accounting, Prepared } from '../request/prepared.ts'
import type { ConversationPlan } from './conversation.ts'
import { socketFormat, socketRoute } from '../providers/registry.ts'
import type { TraceContextHeaders } from '../telemetry/telemetry.ts'
import type { AttemptTiming } from '../upstream/send-with-retries.ts'

/** The upstream the Responses socket talks to, from the provider registry. */
const socketProvider = socketFormat.provider.upstream

/** One `response.create` on a socket, from the client's message to the response's last event. */
export class SocketTurn {
  readonly number: number
  readonly started = performance.now()
  readonly bytesIn: number
  readonly output: unknown[] = []
  plan: ConversationPlan = { kind: 'untracked' }
  prepared: Prepared | undefined
  accounting: Accounting | undefined
  log: Readonly<Record<string, unknown>> | undefined
  usage: UsageReader | undefined
  /** `as-sent` (the client's bytes) or `full-input` (ctxgate's edited request without previous_response_id). */
  sentAs: 'as-sent' | 'full-input' | undefined
  sentAt: number | undefined
  firstEventAt: number | undefined
  bytesOut = 0
  failOpen: string | undefined
  error: string | undefined
  /** Preamble messages held until the next one shows whether the response was refused for length. */
  held: Buffer[] | undefined
  /** The first response was refused for length and a smaller one asked for: its leftover messages are dropped. */
  refitted = false
  /** While the smaller request is being prepared: what the refused response still sends, kept in case none can be made. */
  refitting: Buffer[] | undefined
  /** The refused response's leftovers are dropped until the smaller one's `response.created`. */
  dropUntilCreated = false
  readonly #finished: Promise<void>
  #finish!: () => void
  #done = false

  constructor(number: number, bytesIn: number) {
    this.number = number
    this.bytesIn = bytesIn
    this.#finished = new Promise((resolve) => (this.#finish = resolve))
  }

  get done(): boolean {
    return this.#done
  }

  /** Resolves once the turn has ended, whichever way. */
  get finished(): Promise<void> {
    return this.#finished
  }

  /** Ends the turn once: metrics, session totals, calibration and its log line. */
  end(deps: TurnDeps, ending: TurnEnding): void {
    if (this.#done) return
    this.#done = true
    this.#finish()
    const usage = ending.usage ?? this.usage?.result()
    if (usage && ending.status === 200) void this.prepared?.followUp?.recordUsage(usage)
    reportRequest(deps, this.#record(deps, ending, usage), {
      reqId: `${deps.socketId}:${this.number}`,
      method: 'WS',
      path: deps.path,
      userAgent: deps.userAgent,
    })
    // The socket keeps its latest turn until the next one: the prepared request (and the parsed body its refit holds) goes now.
    this.prepared = undefined
    this.plan = { kind: 'untracked' }
    this.held = undefined
    this.refitting = undefined
    this.output.length = 0
  }

  /** The turn's one record, as an HTTP request's: fields in one fixed order. */
  #record(deps: TurnDeps, ending: TurnEnding, usage: Usage | undefined): RequestRecord {
    const now = performance.now()
    const sentAt = this.sentAt
    const trace = deps.telemetry ? this.#traceFields(deps, now) : undefined
    return {
      route: socketRoute,
      provider: socketProvider,
      status: ending.status,
      outcome: ending.outcome,
      upstreamStatus: this.firstEventAt !== undefined ? 200 : undefined,
      attempts: sentAt === undefined ? 0 : this.refitted ? 2 : 1,
      retries: [],
      failOpen: this.failOpen,
      durationMs: now - this.started,
      requestOverheadMs: sentAt === undefined ? undefined : sentAt - this.started,
      responseOverheadMs: undefined,
      ttfbMs: sentAt !== undefined && this.firstEventAt !== undefined ? this.firstEventAt - sentAt : undefined,
      usage: usage && ending.status === 200 ? usage : undefined,
      accounting: this.accounting,
      startedAt: trace?.startedAt,
      traceContext: trace?.traceContext,
      upstreamAttempts: trace?.upstreamAttempts,
      streamed: trace?.streamed,
      refitted: trace?.refitted,
      response: trace?.response,
      log: this.log,
      error: ending.error ?? this.error,
      upstreamRequestId: undefined,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      sentAs: this.sentAs,
    }
  }

  /** The span's start, parent (the handshake's traceparent) and the one upstream send, from `response.create` to its first event. */
  #traceFields(deps: TurnDeps, now: number) {
    const attempt: AttemptTiming | undefined =
      this.sentAt === undefined
        ? undefined
        : this.firstEventAt === undefined
          ? { startedAt: this.sentAt, endedAt: now }
          : { startedAt: this.sentAt, endedAt: this.firstEventAt, status: 200 }
    return {
      startedAt: this.started,
      ...(deps.traceContext ? { traceContext: deps.traceContext } : {}),
      upstreamAttempts: attempt ? [attempt] : [],
      streamed: true,
      refitted: this.refitted,
      response: this.usage?.response?.(),
    }
  }
}

export interface TurnDeps extends ReportDeps {
  /** The handshake's user agent, for the live page's client column. */
  readonly userAgent?: string
  readonly socketId: string
  readonly path: string
  /** The handshake's traceparent: every response on the socket joins that trace. */
  readonly traceContext?: TraceContextHeaders
}

export interface TurnEnding {
  readonly status: number
  /** complete, incomplete, upstream_error, rejected, client_closed, upstream_failed. */
  readonly outcome: string
  readonly usage?: Usage
  readonly error?: string
}
