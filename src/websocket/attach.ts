import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { WebSocket, WebSocketServer } from 'ws'
import type { Config } from '../config/schema.ts'
import { CtxgateError } from '../errors.ts'
import type { RecordDeps } from '../metrics/record-request.ts'
import type { Provider } from '../providers/provider-contract.ts'
import { providerForPassthrough, socketFormat } from '../providers/registry.ts'
import { requestTargetProblem } from '../forward/request-target.ts'
import type { LiveRecorder } from '../live/live-recorder.ts'
import type { PrepareBody } from '../request/prepared.ts'
import { createTokenCheck } from '../security/tokens.ts'
import { classifyUpstreamError } from '../upstream/classify-error.ts'
import type { Upstreams } from '../providers/registry.ts'
import { relayFrames } from './frame-relay.ts'
import {
  clientHandshakeLines,
  offeredProtocols,
  refuseUpgrade,
  relayRefusal,
  socketUrl,
  upstreamHandshakeHeaders,
} from './handshake.ts'
import { GarbageAfterLargeTurns } from './garbage-after-large-turns.ts'
import type { HistoryBudget } from './history-budget.ts'
import { AnnouncedMessages } from './announced-messages.ts'
import { PreparationGate, preparationCopies } from './preparation-gate.ts'
import { ResponsesSocket } from './responses-socket.ts'
import { traceContextOf, type TraceContextHeaders } from '../telemetry/telemetry.ts'

export interface WebSocketDeps extends RecordDeps {
  readonly config: Readonly<Config>
  readonly upstreams: Upstreams
  readonly logger: Logger
  /** How `response.create` messages are prepared: the same function as `POST /v1/responses`. */
  readonly prepare: PrepareBody | undefined
  /** The live page (/ctxgate/): told about every finished response. */
  readonly live?: LiveRecorder
  /** The memory every socket's kept conversation may take together. */
  readonly historyBudget?: HistoryBudget
}

/** One full collection once no large turn was sent for this long. */
const collectWhenQuietMs = 250
/** A large message still arriving this long after its place was given gives the place back (a slow sender holds no one up). */
const receiveGraceMs = 2_000

/** The wire format spoken over a WebSocket, from the provider registry. */
const responsesFormat = socketFormat
/** The Responses API's paths: the only upgrades ctxgate reads; others are bridged as they are. */
const responsesPaths = new Set(responsesFormat?.paths ?? [])

interface OpenSocket {
  readonly responses: ResponsesSocket | undefined
  close(code: number, reason: string): void
  /** Settles once the client socket has closed. */
  readonly closed: Promise<void>
}

export interface AttachedWebSockets {
  /** The large messages held before and during preparation, across sockets (for the metrics). */
  readonly preparation: PreparationGate
  /**
   * The shutdown grace is over: every socket still open gets a close frame (1001), a response in
   * flight an error event first. Resolves once they closed, or after `waitMs`.
   */
  closeAll(waitMs: number): Promise<number>
}

/**
 * WebSocket upgrades: on the Responses paths each socket is bridged to the OpenAI upstream with
 * every `response.create` prepared like a POST; on any other path it is bridged untouched to the
 * upstream the path belongs to. Client authentication applies as on HTTP.
 */
export function attachWebSockets(app: FastifyInstance, deps: WebSocketDeps): AttachedWebSockets {
  const clientAllowed = createTokenCheck(deps.config.auth.tokens)
  const accepted = new WeakMap<IncomingMessage, { lines: string[]; protocol: string }>()
  const server = new WebSocketServer({
    noServer: true,
    autoPong: false,
    maxPayload: deps.config.server.bodyLimitBytes,
    handleProtocols: (_offered, request) => accepted.get(request)?.protocol || false,
  })
  server.on('headers', (headers, request) => headers.push(...(accepted.get(request)?.lines ?? [])))
  const open = new Set<OpenSocket>()
  const preparationGate = new PreparationGate(deps.config.websocket.maxPreparingBytes, preparationCopies)
  const garbage = new GarbageAfterLargeTurns(collectWhenQuietMs)
  let closing = false
  let sockets = 0

  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    const refusal = refusalFor(request, deps, clientAllowed, closing)
    if (refusal) return refuseWithError(socket, upstreamOf(request), refusal.error, refusal.status)
    const context = {
      request,
      socket,
      head,
      server,
      accepted,
      open,
      preparationGate,
      garbage,
      socketId: `ws${++sockets}`,
    }
    try {
      connectUpstream(deps, context)
    } catch (error) {
      // ws throws synchronously on a handshake it will not send (a duplicated or malformed subprotocol list).
      const reason = error instanceof Error ? error.message : String(error)
      deps.logger.warn({ error: reason }, 'websocket upgrade refused')
      refuseWithError(
        socket,
        upstreamOf(request),
        new CtxgateError('CTXGATE_INVALID_REQUEST', `ctxgate could not open this WebSocket: ${reason}`),
      )
    }
  })
  app.addHook('preClose', async () => {
    closing = true
    // Idle sockets close now; one with a response in flight closes when that response ends.
    for (const entry of open)
      void (entry.responses?.idle() ?? Promise.resolve()).then(() => entry.close(1001, 'ctxgate is shutting down'))
  })
  return {
    preparation: preparationGate,
    async closeAll(waitMs) {
      const entries = [...open]
      for (const entry of entries) {
        entry.responses?.endForShutdown()
        entry.close(1001, 'ctxgate is shutting down')
      }
      let timer: NodeJS.Timeout | undefined
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs).unref()))
      await Promise.race([Promise.all(entries.map((entry) => entry.closed)), waited])
      clearTimeout(timer)
      return entries.length
    },
  }
}

function upstreamOf(request: IncomingMessage): Provider {
  const path = pathOf(request)
  if (responsesFormat && responsesPaths.has(path)) return responsesFormat.provider
  return providerForPassthrough(request.url ?? '/', request.headers)
}

function refusalFor(
  request: IncomingMessage,
  deps: WebSocketDeps,
  clientAllowed: (token: string | undefined) => boolean,
  closing: boolean,
): { error: CtxgateError; status?: number } | undefined {
  if (closing)
    return { error: new CtxgateError('CTXGATE_UPSTREAM_UNREACHABLE', 'ctxgate is shutting down'), status: 503 }
  const targetProblem = requestTargetProblem(request.url ?? '')
  if (targetProblem) return { error: new CtxgateError('CTXGATE_INVALID_REQUEST', targetProblem) }
  if (deps.config.auth.tokens.length === 0) return undefined
  const presented = request.headers['x-ctxgate-auth']
  if (clientAllowed(Array.isArray(presented) ? presented[0] : presented)) return undefined
  return {
    error: new CtxgateError(
      'CTXGATE_UNAUTHORIZED',
      'ctxgate requires a valid x-ctxgate-auth header on this deployment',
    ),
  }
}

/** ctxgate's own refusal of an upgrade: the provider's error shape and the stable code, as on HTTP. */
function refuseWithError(socket: Duplex, provider: Provider, error: CtxgateError, status = error.status): void {
  refuseUpgrade(socket, status, provider.errorShape.body(error.kind, error.message), {
    'x-ctxgate-error-code': error.code,
  })
}

interface UpgradeContext {
  readonly request: IncomingMessage
  readonly socket: Duplex
  readonly head: Buffer
  readonly server: WebSocketServer
  readonly accepted: WeakMap<IncomingMessage, { lines: string[]; protocol: string }>
  readonly open: Set<OpenSocket>
  readonly preparationGate: PreparationGate
  readonly garbage: GarbageAfterLargeTurns
  readonly socketId: string
}

/** Opens the upstream socket first, so its answer to the handshake (even a refusal) is the client's answer. */
function connectUpstream(deps: WebSocketDeps, context: UpgradeContext): void {
  const { request, socket } = context
  const provider = upstreamOf(request)
  const upstreamId = provider.upstream
  const upstream = deps.upstreams[upstreamId]
  const target = socketUrl(upstream.origin, provider.upstreamPath(upstream.basePath, request.url ?? '/'))
  const upstreamSocket = new WebSocket(target, offeredProtocols(request.headers), {
    headers: upstreamHandshakeHeaders(request.headers) as Record<string, string>,
    autoPong: false,
    followRedirects: false,
    handshakeTimeout: deps.config.upstream.connectTimeoutMs,
  })
  let upgradeResponse: IncomingMessage | undefined
  upstreamSocket.once('upgrade', (response) => (upgradeResponse = response))
  upstreamSocket.once('unexpected-response', (_request, response) => relayRefusal(socket, response))
  upstreamSocket.on('error', (error) => {
    if (upstreamSocket.readyState === upstreamSocket.OPEN) return
    // The socket error names the upstream's address: it goes to the log, the client gets a label.
    const { code, label } = classifyUpstreamError(error)
    deps.logger.warn({ reqId: context.socketId, upstream: upstreamId, err: error.message }, 'websocket upstream failed')
    const failure = new CtxgateError(code, `ctxgate could not open a WebSocket to the ${upstreamId} API: ${label}`)
    refuseWithError(socket, provider, failure)
  })
  // The client went away while ctxgate was still connecting.
  socket.once('close', () => {
    if (upstreamSocket.readyState === upstreamSocket.CONNECTING) upstreamSocket.terminate()
  })
  upstreamSocket.once('open', () => {
    upstreamSocket.pause()
    context.accepted.set(request, {
      lines: upgradeResponse ? clientHandshakeLines(upgradeResponse) : [],
      protocol: upstreamSocket.protocol,
    })
    context.server.handleUpgrade(request, socket, context.head, (client) =>
      bridge(deps, context, client, upstreamSocket),
    )
  })
}

function bridge(deps: WebSocketDeps, context: UpgradeContext, client: WebSocket, upstream: WebSocket): void {
  const path = pathOf(context.request)
  const announced = responsesPaths.has(path) ? announcedMessages(context, client) : undefined
  const responses = announced
    ? new ResponsesSocket(
        {
          ...deps,
          socketId: context.socketId,
          path,
          maxConversationBytes: deps.config.server.bodyLimitBytes,
          ...(deps.historyBudget ? { historyBudget: deps.historyBudget } : {}),
          preparationGate: context.preparationGate,
          garbage: context.garbage,
          announced,
          ...(context.request.headers['user-agent'] ? { userAgent: context.request.headers['user-agent'] } : {}),
          ...traceContextField(context.request.headers),
        },
        context.request.headers,
      )
    : undefined
  const relay = relayFrames(client, upstream, responses?.hooks)
  responses?.bind(relay)
  let closed!: () => void
  const entry: OpenSocket = { responses, close: relay.close, closed: new Promise((resolve) => (closed = resolve)) }
  context.open.add(entry)
  const opened = performance.now()
  client.once('close', (code: number) => {
    closed()
    context.open.delete(entry)
    deps.logger.info(
      {
        reqId: context.socketId,
        method: 'WS',
        path,
        turns: responses?.turns,
        closeCode: code,
        durationMs: Math.round(performance.now() - opened),
      },
      'websocket closed',
    )
  })
  upstream.resume()
}

/** Reads the client's frame headers before ws does, so a large message has its place before it is received. */
function announcedMessages(context: UpgradeContext, client: WebSocket): AnnouncedMessages {
  const announced = new AnnouncedMessages(context.preparationGate, client, receiveGraceMs)
  context.socket.prependListener('data', (chunk: Buffer) => announced.read(chunk))
  // Before the relay's listener: each message is matched to its announcement in arrival order.
  client.on('message', () => announced.arrived())
  return announced
}

function pathOf(request: IncomingMessage): string {
  return (request.url ?? '/').split('?')[0] ?? '/'
}

function traceContextField(headers: IncomingHttpHeaders): { traceContext?: TraceContextHeaders } {
  const traceContext = traceContextOf(headers)
  return traceContext ? { traceContext } : {}
}
