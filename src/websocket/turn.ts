import { reportRequest, type ReportDeps } from '../forward/report-request.ts'
import type { RequestRecord } from '../request/request-record.ts'
import type { Usage, UsageReader } from '../model-call/usage.ts'
import type { Accounting, Prepared } from '../request/prepared.ts'
import type { LengthRefusal } from '../providers/length-refusal.ts'
import type { ConversationPlan } from './conversation.ts'
import { socketFormat, socketRoute } from '../providers/registry.ts'
import type { TraceContextHeaders } from '../telemetry/telemetry.ts'
import type { AttemptTiming } from '../upstream/send-with-retries.ts'
import { eventType } from './socket-messages.ts'

/** The upstream the Responses socket talks to, from the provider registry. */
const socketProvider = socketFormat.provider.upstream

/**
 * The request side of a turn: what ctxgate made of the client's message. Each step below replaces it
 * whole, so every change of a turn's facts is one named method, and its record is read from here once.
 */
interface TurnRequest {
  readonly plan: ConversationPlan
  readonly prepared?: Prepared | undefined
  readonly accounting?: Accounting | undefined
  readonly log?: Readonly<Record<string, unknown>> | undefined
  readonly usage?: UsageReader | undefined
  /** `as-sent` (the client's bytes) or `full-input` (ctxgate's edited request without previous_response_id). */
  readonly sentAs?: 'as-sent' | 'full-input' | undefined
  readonly failOpen?: string | undefined
  readonly error?: string | undefined
  /** The first response was refused for length and a smaller one asked for. */
  readonly refitted: boolean
}

/**
 * Where the response's opening messages go: relayed; held (its content-free preamble, until the next
 * message shows whether it was refused for length); kept while a smaller request is prepared (in
 * case none can be made); or dropped, the refused response's leftovers, until the smaller one's
 * `response.created`.
 */
type Opening =
  | { readonly state: 'relay' }
  | { readonly state: 'holding'; readonly held: Buffer[] }
  | { readonly state: 'refitting'; readonly kept: Buffer[] }
  | { readonly state: 'dropping' }

/** What the socket does with one upstream message while the opening is decided. */
export type OpeningStep =
  | { readonly kind: 'relay' }
  | { readonly kind: 'swallow' }
  | { readonly kind: 'release'; readonly held: readonly Buffer[] }
  | { readonly kind: 'refit'; readonly refusal: LengthRefusal }

const relaying: Opening = { state: 'relay' }
/** What a turn keeps of a body once it is sent: nothing. */
const sentBody = Buffer.alloc(0)

/** One `response.create` on a socket, from the client's message to the response's last event. */
export class SocketTurn {
  readonly number: number
  readonly #started = performance.now()
  readonly #bytesIn: number
  readonly #output: unknown[] = []
  #request: TurnRequest = { plan: { kind: 'untracked' }, refitted: false }
  #opening: Opening = relaying
  #sentAt: number | undefined
  #firstEventAt: number | undefined
  #bytesOut = 0
  readonly #finished: Promise<void>
  #finish!: () => void
  #done = false

  constructor(number: number, bytesIn: number) {
    this.number = number
    this.#bytesIn = bytesIn
    this.#finished = new Promise((resolve) => (this.#finish = resolve))
  }

  get done(): boolean {
    return this.#done
  }

  /** Resolves once the turn has ended, whichever way. */
  get finished(): Promise<void> {
    return this.#finished
  }

  get plan(): ConversationPlan {
    return this.#request.plan
  }

  get prepared(): Prepared | undefined {
    return this.#request.prepared
  }

  /** Its request went upstream. */
  get sent(): boolean {
    return this.#sentAt !== undefined
  }

  /** The upstream has sent at least one event: a turn ending now ends with the upstream's 200. */
  get answered(): boolean {
    return this.#firstEventAt !== undefined
  }

  /** The output items the response's events announced (its terminal event may list them itself). */
  get outputItems(): readonly unknown[] {
    return this.#output
  }

  /** The socket's conversation says what the message continues; without history the turn fails open. */
  planned(plan: ConversationPlan): void {
    this.#request = {
      ...this.#request,
      plan,
      ...(plan.kind === 'untracked' ? { failOpen: 'websocket_history' } : {}),
    }
  }

  /** ctxgate answered the message itself (an unknown previous response, a request too long to fit). */
  answeredItself(facts: { readonly accounting?: Accounting; readonly log?: Readonly<Record<string, unknown>> }): void {
    this.#request = { ...this.#request, accounting: facts.accounting, log: facts.log }
  }

  /** The message was prepared like a POST; `editedInput` when what goes is ctxgate's own full input. */
  adopt(prepared: Prepared, editedInput: boolean): void {
    this.#request = {
      ...this.#request,
      prepared,
      log: prepared.log,
      accounting: prepared.accounting,
      usage: prepared.followUp?.usageReader(),
      ...(editedInput ? { sentAs: 'full-input' as const } : {}),
    }
  }

  /** Preparing failed: the client's message goes as sent, and the log says why. */
  preparationFailed(error: unknown): void {
    this.#request = {
      ...this.#request,
      failOpen: 'prepare',
      error: error instanceof Error ? error.message : String(error),
    }
  }

  /**
   * The request goes upstream; one ctxgate may make smaller is held at its preamble. The turn keeps
   * none of the bytes sent (a large conversation's would live as long as its response streams).
   */
  send(): void {
    const request = this.#request
    this.#request = {
      ...request,
      prepared: request.prepared && { ...request.prepared, body: sentBody },
      usage: request.usage ?? socketFormat.chat.usage(),
      sentAs: request.sentAs ?? 'as-sent',
    }
    this.#sentAt = performance.now()
    if (request.prepared?.followUp?.replannable) this.#opening = { state: 'holding', held: [] }
    else this.#settle()
  }

  /** No refit can come any more: the request the refit would re-plan is let go. */
  #settle(): void {
    this.#request.prepared?.followUp?.settle?.()
  }

  /** A message ctxgate failed to read went on as the client sent it. */
  sentAfterFailure(): void {
    const request = this.#request
    this.#request = {
      ...request,
      failOpen: 'prepare',
      usage: request.usage ?? socketFormat.chat.usage(),
      sentAs: 'as-sent',
    }
    this.#sentAt = performance.now()
  }

  /**
   * One upstream message through the opening: a length refusal right after the preamble starts a
   * refit, and what the refused response sends meanwhile is kept.
   */
  openingStep(data: Buffer): OpeningStep {
    const opening = this.#opening
    if (opening.state === 'relay') return { kind: 'relay' }
    if (opening.state === 'refitting') {
      opening.kept.push(data)
      return { kind: 'swallow' }
    }
    if (opening.state === 'dropping') {
      if (eventType(data) !== 'response.created') return { kind: 'swallow' }
      this.#opening = relaying
      return { kind: 'relay' }
    }
    if (socketFormat.streamRefusal.preamble.has(eventType(data))) {
      opening.held.push(data)
      return { kind: 'swallow' }
    }
    const refusal = socketFormat.streamRefusal.read(data.toString('utf8'))
    if (!refusal) {
      this.#opening = relaying
      this.#settle()
      return { kind: 'release', held: opening.held }
    }
    this.#opening = { state: 'refitting', kept: [...opening.held, data] }
    return { kind: 'refit', refusal }
  }

  /** Preparing the smaller request is over: what the refused response sent meanwhile. */
  refitEnded(): readonly Buffer[] {
    const kept = this.#opening.state === 'refitting' ? this.#opening.kept : []
    this.#opening = relaying
    this.#settle()
    return kept
  }

  /** A smaller request replaces the refused one; the refused response's leftovers are dropped. */
  refitted(smaller: Prepared): void {
    this.#request = {
      ...this.#request,
      prepared: { ...smaller, body: sentBody },
      log: smaller.log,
      accounting: smaller.accounting ?? this.#request.accounting,
      usage: smaller.followUp?.usageReader(),
      refitted: true,
      sentAs: 'full-input',
    }
    this.#settle()
    this.#opening = { state: 'dropping' }
  }

  /** One upstream event: timing, bytes, and the usage reader's copy (which must never fail the relay). */
  upstreamEvent(data: Buffer, text: string): void {
    this.#firstEventAt ??= performance.now()
    this.#bytesOut += data.length
    try {
      this.#request.usage?.onEvent({ data: text })
    } catch {
      // Usage is read from a copy; an event it cannot read changes nothing for the client.
    }
  }

  outputItem(item: unknown): void {
    this.#output.push(item)
  }

  /** Ends the turn once: metrics, session totals, calibration and its log line. */
  end(deps: TurnDeps, ending: TurnEnding): void {
    if (this.#done) return
    this.#done = true
    this.#finish()
    const usage = ending.usage ?? this.#request.usage?.result()
    if (usage && ending.status === 200) void this.#request.prepared?.followUp?.recordUsage(usage)
    reportRequest(deps, this.#record(deps, ending, usage), {
      reqId: `${deps.socketId}:${this.number}`,
      method: 'WS',
      path: deps.path,
      userAgent: deps.userAgent,
    })
    // The socket keeps its latest turn until the next one: the prepared request (and the parsed body its refit holds) goes now.
    this.#request = { ...this.#request, prepared: undefined, plan: { kind: 'untracked' } }
    this.#opening = relaying
    this.#output.length = 0
  }

  /** The turn's one record, as an HTTP request's: fields in one fixed order. */
  #record(deps: TurnDeps, ending: TurnEnding, usage: Usage | undefined): RequestRecord {
    const now = performance.now()
    const sentAt = this.#sentAt
    const request = this.#request
    const trace = deps.telemetry ? this.#traceFields(deps, now) : undefined
    return {
      route: socketRoute,
      provider: socketProvider,
      status: ending.status,
      outcome: ending.outcome,
      upstreamStatus: this.#firstEventAt !== undefined ? 200 : undefined,
      attempts: sentAt === undefined ? 0 : request.refitted ? 2 : 1,
      retries: [],
      failOpen: request.failOpen,
      durationMs: now - this.#started,
      requestOverheadMs: sentAt === undefined ? undefined : sentAt - this.#started,
      responseOverheadMs: undefined,
      ttfbMs: sentAt !== undefined && this.#firstEventAt !== undefined ? this.#firstEventAt - sentAt : undefined,
      usage: usage && ending.status === 200 ? usage : undefined,
      accounting: request.accounting,
      startedAt: trace?.startedAt,
      traceContext: trace?.traceContext,
      upstreamAttempts: trace?.upstreamAttempts,
      streamed: trace?.streamed,
      refitted: trace?.refitted,
      response: trace?.response,
      log: request.log,
      error: ending.error ?? request.error,
      upstreamRequestId: undefined,
      bytesIn: this.#bytesIn,
      bytesOut: this.#bytesOut,
      sentAs: request.sentAs,
    }
  }

  /** The span's start, parent (the handshake's traceparent) and the one upstream send, from `response.create` to its first event. */
  #traceFields(deps: TurnDeps, now: number) {
    const attempt: AttemptTiming | undefined =
      this.#sentAt === undefined
        ? undefined
        : this.#firstEventAt === undefined
          ? { startedAt: this.#sentAt, endedAt: now }
          : { startedAt: this.#sentAt, endedAt: this.#firstEventAt, status: 200 }
    return {
      startedAt: this.#started,
      ...(deps.traceContext ? { traceContext: deps.traceContext } : {}),
      upstreamAttempts: attempt ? [attempt] : [],
      streamed: true,
      refitted: this.#request.refitted,
      response: this.#request.usage?.response?.(),
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
