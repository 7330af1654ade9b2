import type { IncomingHttpHeaders } from 'node:http'
import { CtxgateError } from '../errors.ts'
import type { PrepareBody, Prepared } from '../request/prepared.ts'
import type { LengthRefusal } from '../providers/length-refusal.ts'
import { socketFormat } from '../providers/registry.ts'
import { readClientMessage, type ClientMessage } from './client-message.ts'
import { inputBytes, SocketConversation, type ConversationPlan } from './conversation.ts'
import type { GarbageAfterLargeTurns } from './garbage-after-large-turns.ts'
import type { HistoryBudget } from './history-budget.ts'
import type { AnnouncedMessages } from './announced-messages.ts'
import { GatePlace, type PreparationGate } from './preparation-gate.ts'
import { ctxgateErrorEvent, previousResponseNotFound } from './error-event.ts'
import type { FrameRelay, RelayHooks } from './frame-relay.ts'
import { modelLabel, parseObject, withInput } from './socket-messages.ts'
import { SocketTurn, type TurnDeps } from './turn.ts'

type Json = Record<string, unknown>

export interface ResponsesSocketDeps extends TurnDeps {
  /** The same preparation as `POST /v1/responses` (rewrite, session, accounting); undefined forwards as sent. */
  readonly prepare: PrepareBody | undefined
  /** Largest conversation (JSON bytes) kept per socket; past it the socket's messages go as sent. */
  readonly maxConversationBytes: number
  /** Shared by every socket: the memory all kept conversations may take together. */
  readonly historyBudget?: HistoryBudget
  /** Shared by every socket: bounds the large messages being parsed and prepared at once. */
  readonly preparationGate?: PreparationGate
  /** Shared by every socket: told when a large conversation was sent, so what it left behind is freed once they go quiet. */
  readonly garbage?: GarbageAfterLargeTurns
  /** This socket's large messages' places, taken when their first frame header arrived. */
  readonly announced?: AnnouncedMessages
}

/** Conversations this large are followed by a collection (smaller ones leave young garbage, which V8 frees soon). */
const collectedAboveBytes = 1024 * 1024

/** Events that may change what the socket's conversation is; anything else is only relayed and counted. */
const interesting = /"type"\s*:\s*"(response\.(completed|incomplete|failed|output_item\.done)|error)"/
const terminal = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error'])

/**
 * The Responses API on one socket: each `response.create` is prepared like a POST (rewritten when
 * over budget, with the socket's whole conversation), one at a time, and its events are read for
 * usage and for the output the next message may continue with `previous_response_id`.
 */
export class ResponsesSocket {
  readonly #deps: ResponsesSocketDeps
  readonly #handshake: IncomingHttpHeaders
  readonly #conversation: SocketConversation
  #relay: FrameRelay | undefined
  #turn: SocketTurn | undefined
  #turns = 0
  #warnedBound = false
  /** Puts back number literals a double could not hold, kept as sentinels in the socket's conversation. */
  readonly #restores: ((serialized: string) => string)[] = []

  constructor(deps: ResponsesSocketDeps, handshake: IncomingHttpHeaders) {
    this.#deps = deps
    this.#handshake = handshake
    this.#conversation = new SocketConversation(deps.maxConversationBytes, deps.historyBudget)
  }

  get turns(): number {
    return this.#turns
  }

  /** Resolves when no response is in flight. */
  idle(): Promise<void> {
    return this.#turn && !this.#turn.done ? this.#turn.finished : Promise.resolve()
  }

  /** The shutdown grace is over: a response in flight ends with an error event before the socket closes. */
  endForShutdown(): void {
    const turn = this.#turn
    if (!turn || turn.done) return
    const message = 'ctxgate is shutting down (its shutdown grace is over) and ended this response; send it again.'
    ;(this.#relay as FrameRelay).toClient(
      ctxgateErrorEvent(new CtxgateError('CTXGATE_UPSTREAM_UNREACHABLE', message)),
      false,
    )
    turn.end(this.#deps, { status: turn.answered ? 200 : 503, outcome: 'shutdown' })
  }

  bind(relay: FrameRelay): void {
    this.#relay = relay
  }

  readonly hooks: RelayHooks = {
    clientMessage: (data, isBinary) => this.#fromClient(data, isBinary),
    holdUpstream: (data, isBinary) => this.#hold(data, isBinary),
    upstreamMessage: (data, isBinary) => this.#fromUpstream(data, isBinary),
    upstreamClosed: (code) => this.#upstreamGone(code),
    // As on HTTP: a client that leaves before any event has status 0, after one the upstream's 200.
    clientReadingHeld: () => this.#deps.announced?.holding ?? false,
    clientClosed: () => {
      this.#deps.announced?.close()
      this.#conversation.release()
      this.#turn?.end(this.#deps, {
        status: this.#turn.answered ? 200 : 0,
        outcome: 'client_closed',
      })
    },
  }

  async #fromClient(data: Buffer, isBinary: boolean): Promise<void> {
    const announced = this.#deps.announced
    const place = new GatePlace(this.#deps.preparationGate, await announced?.next())
    try {
      await place.take(data.length)
      const relay = this.#relay as FrameRelay
      const message = isBinary ? undefined : this.#readClientMessage(data)
      // Read, a large message leaves its frame's chunks and its text behind, while its preparation is the peak.
      if (data.length >= collectedAboveBytes) this.#deps.garbage?.released()
      if (message?.fields['type'] !== 'response.create') return relay.toUpstream(data, isBinary)
      // The service answers one response at a time per socket; the next waits for this one's end (outside the gate).
      if (this.#turn && !this.#turn.done) place.give()
      await this.idle()
      await this.#startTurn(message, data, place)
    } catch (error) {
      this.#forwardAfterFailure(data, isBinary, error)
    } finally {
      place.give()
      announced?.done()
    }
  }

  /** A message ctxgate failed to read goes on as the client sent it, like any bad input, and the log says why. */
  #forwardAfterFailure(data: Buffer, isBinary: boolean, error: unknown): void {
    const turn = this.#turn
    const reqId = turn ? `${this.#deps.socketId}:${turn.number}` : this.#deps.socketId
    const reason = error instanceof Error ? error.message : 'unreadable'
    this.#deps.logger.warn({ reqId, error: reason }, 'websocket message could not be read; forwarded as sent')
    if (turn && !turn.done && !turn.sent) turn.sentAfterFailure()
    else if (turn?.sent && !turn.done) return
    ;(this.#relay as FrameRelay).toUpstream(data, isBinary)
  }

  async #startTurn(message: ClientMessage, data: Buffer, place: GatePlace): Promise<void> {
    const relay = this.#relay as FrameRelay
    const turn = new SocketTurn(++this.#turns, data.length)
    this.#turn = turn
    turn.planned(this.#conversation.plan(message))
    if (turn.plan.kind === 'not-found') {
      turn.answeredItself({ accounting: { model: modelLabel(message.fields['model']), refusalAvoided: false } })
      relay.toClient(previousResponseNotFound(turn.plan.id), false)
      return turn.end(this.#deps, { status: 400, outcome: 'rejected', error: 'previous_response_not_found' })
    }
    // The message is held until it is sent, and what is prepared is the whole conversation, however short the message.
    const prepared = this.#preparedBytes(turn.plan)
    await place.take(Math.max(data.length, prepared))
    const send = turn.plan.kind === 'full' ? await this.#prepare(turn, message, data) : data
    if (send === undefined) return
    // A request ctxgate can make smaller is held at its preamble until the next message says whether it was refused.
    turn.send()
    relay.toUpstream(send, false)
    // Sent as written or prepared, a large conversation leaves its frame, text and copies behind.
    if (Math.max(data.length, prepared) >= collectedAboveBytes) this.#deps.garbage?.released()
  }

  /** A client message, its unholdable number literals kept aside so a full-input resend carries them as written. */
  #readClientMessage(data: Buffer): ClientMessage | undefined {
    const message = readClientMessage(data)
    if (message?.restore) this.#restores.push(message.restore)
    return message
  }

  /** The bytes a turn's preparation works on: its conversation's when that is written out whole. */
  #preparedBytes(plan: ConversationPlan): number {
    return this.#deps.prepare && plan.kind === 'full' ? plan.bytes : 0
  }

  #restoreNumbers(body: Buffer): Buffer {
    if (this.#restores.length === 0) return body
    let text = body.toString('utf8')
    for (const restore of this.#restores) text = restore(text)
    return Buffer.from(text)
  }

  /** Runs the rewrite on the whole conversation; returns what to send, or undefined when ctxgate answered. */
  async #prepare(turn: SocketTurn, message: ClientMessage, original: Buffer): Promise<Buffer | undefined> {
    if (!this.#deps.prepare || turn.plan.kind !== 'full') return original
    // The request to prepare is the message itself (its `type` first, no previous_response_id), so what
    // comes back is sent as it is: no second copy of a large conversation to put the type back in front.
    const { type: _type, previous_response_id: _previous, ...fields } = message.fields
    const body = withInput({ type: 'response.create', ...fields }, inputBytes(turn.plan))
    try {
      const result = await this.#deps.prepare(body, this.#handshake)
      if (result.kind === 'reject') {
        turn.answeredItself(result)
        ;(this.#relay as FrameRelay).toClient(ctxgateErrorEvent(result.error), false)
        turn.end(this.#deps, { status: result.error.status, outcome: 'rejected', error: result.error.code })
        return undefined
      }
      // Unchanged: the client's own message goes on, previous_response_id and all.
      const unchanged = result.prepared.body === body || result.prepared.body.equals(body)
      turn.adopt(result.prepared, !unchanged)
      if (unchanged) return original
      return this.#restoreNumbers(result.prepared.body)
    } catch (error) {
      turn.preparationFailed(error)
      return original
    }
  }

  /**
   * Holds a response's content-free opening messages (`response.created`, `response.in_progress`)
   * until the next one: a length refusal there is answered with one smaller `response.create`
   * before anything of the refused response reached the client; anything else releases them first.
   */
  #hold(data: Buffer, isBinary: boolean): boolean {
    const turn = this.#turn
    if (!turn || turn.done || isBinary) return false
    const step = turn.openingStep(data)
    if (step.kind === 'release') this.#release(step.held)
    if (step.kind === 'refit') void this.#refit(turn, step.refusal)
    return step.kind === 'swallow' || step.kind === 'refit'
  }

  /** Relays held messages in order, each read as if it had just arrived. */
  #release(held: readonly Buffer[]): void {
    for (const message of held) {
      ;(this.#relay as FrameRelay).toClient(message, false)
      this.#fromUpstream(message, false)
    }
  }

  async #refit(turn: SocketTurn, refusal: LengthRefusal): Promise<void> {
    let smaller: Prepared | undefined
    try {
      smaller = await turn.prepared?.followUp?.replan(refusal)
    } catch {
      smaller = undefined
    }
    const kept = turn.refitEnded()
    if (!smaller || turn.done) return this.#release(kept)
    turn.refitted(smaller)
    ;(this.#relay as FrameRelay).toUpstream(this.#restoreNumbers(smaller.body), false)
  }

  #fromUpstream(data: Buffer, isBinary: boolean): void {
    const turn = this.#turn
    if (!turn || turn.done || isBinary) return
    const text = data.toString('utf8')
    turn.upstreamEvent(data, text)
    if (!interesting.test(text)) return
    const event = parseObject(data)
    const type = event?.['type']
    if (!event || typeof type !== 'string') return
    if (type === 'response.output_item.done') turn.outputItem(event['item'])
    if (terminal.has(type)) this.#endTurn(turn, type, event)
  }

  #endTurn(turn: SocketTurn, type: string, event: Json): void {
    if (type === 'error') {
      const status = typeof event['status'] === 'number' ? event['status'] : 200
      const error = (event['error'] as Json | undefined)?.['code'] ?? event['code']
      return turn.end(this.#deps, {
        status,
        outcome: 'upstream_error',
        error: typeof error === 'string' ? error : 'error',
      })
    }
    const response = (event['response'] ?? {}) as Json
    const output =
      Array.isArray(response['output']) && response['output'].length > 0 ? response['output'] : turn.outputItems
    if (typeof response['id'] === 'string') this.#remember(turn, response['id'], output)
    const outcome =
      type === 'response.completed' ? 'complete' : type === 'response.failed' ? 'upstream_error' : 'incomplete'
    turn.end(this.#deps, { status: 200, outcome })
  }

  #remember(turn: SocketTurn, responseId: string, output: readonly unknown[]): void {
    const kept = this.#conversation.commit(turn.plan, responseId, output)
    if ((kept !== 'over-bound' && kept !== 'over-budget') || this.#warnedBound) return
    this.#warnedBound = true
    const bound =
      kept === 'over-bound'
        ? { maxConversationBytes: this.#deps.maxConversationBytes }
        : { maxHistoryBytes: this.#deps.historyBudget?.max }
    this.#deps.logger.warn(
      { reqId: `${this.#deps.socketId}:${turn.number}`, ...bound },
      kept === 'over-bound'
        ? 'websocket conversation over its bound; this socket is forwarded as sent until the client sends a full input'
        : 'websocket histories of all sockets at websocket.maxHistoryBytes; this socket is forwarded as sent until the client sends a full input',
    )
  }

  #upstreamGone(code: number): void {
    const turn = this.#turn
    if (!turn || turn.done || !turn.sent) return
    const message =
      `The ${socketFormat.provider.upstream} API closed the connection (code ${code}) before the response completed. ` +
      'ctxgate does not resend a request once it has been sent; send it again on a new connection.'
    ;(this.#relay as FrameRelay).toClient(
      ctxgateErrorEvent(new CtxgateError('CTXGATE_UPSTREAM_UNREACHABLE', message)),
      false,
    )
    turn.end(this.#deps, {
      status: turn.answered ? 200 : 502,
      outcome: 'upstream_failed',
      error: `close ${code}`,
    })
  }
}
