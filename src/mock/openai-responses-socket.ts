import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { WebSocketServer, type RawData, type WebSocket } from 'ws'
import { faultFromHeader, type Fault, type FaultQueue } from './faults.ts'
import { answerResponses, isRefusal, type ResponsesTurnInput } from './openai-responses.ts'
import type { MockUsage } from './types.ts'

type Json = Record<string, unknown>

export interface ResponsesSocketContext {
  readonly turn: Omit<ResponsesTurnInput, 'request' | 'history' | 'sequence' | 'replyKind'>
  readonly faults: FaultQueue
  /** Logs one `response.create` like an HTTP request and returns its sequence number and record. */
  readonly record: (handshake: IncomingMessage, body: string) => { sequence: number; finished: () => void }
  /** Adds an answered turn's usage to the mock's ledger, as the HTTP route does. */
  readonly recordUsage?: (usage: MockUsage) => void
}

const socketPaths = new Set(['/v1/responses', '/responses'])

/**
 * The Responses API over WebSocket: `response.create` messages in, the stream's events out, one
 * JSON text message each. Each socket keeps its latest response, which `previous_response_id` may
 * continue (the service keeps the same when `store` is false).
 */
export function attachResponsesSocket(server: Server, context: ResponsesSocketContext): { terminateAll(): void } {
  const sockets = new WebSocketServer({ noServer: true })
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/'
    if (!socketPaths.has(path)) {
      const body = JSON.stringify({
        error: { message: `Invalid URL (GET ${path})`, type: 'invalid_request_error', param: null, code: null },
      })
      socket.end(
        `HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      )
      return
    }
    sockets.handleUpgrade(request, socket, head, (ws) => serveSocket(ws, request, context))
  })
  return {
    terminateAll: () => {
      for (const client of sockets.clients) client.terminate()
    },
  }
}

function serveSocket(ws: WebSocket, handshake: IncomingMessage, context: ResponsesSocketContext): void {
  let latest: { id: string; conversation: readonly unknown[] } | undefined
  let chain = Promise.resolve()
  ws.on('error', () => ws.terminate())
  ws.on('message', (data: RawData, isBinary: boolean) => {
    chain = chain
      .then(async () => {
        const done = await answerMessage(ws, handshake, context, latest, isBinary ? undefined : String(data))
        if (done) latest = done
      })
      .catch(() => ws.terminate())
  })
}

async function answerMessage(
  ws: WebSocket,
  handshake: IncomingMessage,
  context: ResponsesSocketContext,
  latest: { id: string; conversation: readonly unknown[] } | undefined,
  text: string | undefined,
): Promise<{ id: string; conversation: readonly unknown[] } | undefined> {
  let message: unknown
  try {
    message = text === undefined ? undefined : JSON.parse(text)
  } catch {
    message = undefined
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    return void (await send(ws, errorEvent(400, 'We could not parse the JSON body of your request.', null, null)))
  const { type, ...request } = message as Json
  // Acknowledgements such as `response.processed` need no answer.
  if (type !== 'response.create') return undefined
  const { sequence, finished } = context.record(handshake, text ?? '')
  const fault = context.faults.next() ?? faultFromHeader(handshake.headers['x-mock-fault'])
  const previous = request['previous_response_id']
  if (typeof previous === 'string' && previous !== latest?.id)
    return void (await send(
      ws,
      errorEvent(
        400,
        `Previous response with id '${previous}' not found.`,
        'previous_response_not_found',
        'previous_response_id',
      ),
    ))
  const replyKind = handshake.headers['x-mock-reply'] === 'tool_use' ? 'tool_use' : 'text'
  const turn = answerResponses({
    ...context.turn,
    request,
    ...(typeof previous === 'string' && latest ? { history: latest.conversation } : {}),
    sequence,
    replyKind,
  })
  if (isRefusal(turn)) {
    await send(ws, JSON.stringify({ type: 'error', status: turn.status, error: turn.error }))
    return undefined
  }
  context.recordUsage?.(turn.usage)
  const completed = await streamEvents(ws, turn.events, fault, dripDelay(fault, handshake))
  if (!completed) return undefined
  finished()
  return { id: String(turn.response['id']), conversation: turn.conversation }
}

/** Sends the events in order, acting out a fault; false when the answer did not complete. */
async function streamEvents(
  ws: WebSocket,
  events: readonly Json[],
  fault: Fault | undefined,
  delayMs: number,
): Promise<boolean> {
  if (fault?.kind === 'reset') {
    ws.terminate()
    return false
  }
  if (fault?.kind === 'hang') return false
  if (fault?.kind === 'status') {
    await send(ws, errorEvent(fault.status, `Mock fault: status ${fault.status}`, 'server_error', null))
    return false
  }
  for (let index = 0; index < events.length; index++) {
    if (fault && 'afterFrames' in fault && index === fault.afterFrames) {
      // Let the events already sent reach the peer first, so the failure is truly mid-response.
      await sleep(20)
      if (fault.kind === 'reset-mid-stream') ws.terminate()
      if (fault.kind === 'error-mid-stream')
        await send(
          ws,
          JSON.stringify({
            type: 'error',
            code: 'server_error',
            message: 'Overloaded',
            param: null,
            sequence_number: index,
          }),
        )
      return false
    }
    if (index > 0 && delayMs > 0) await sleep(delayMs)
    if (ws.readyState !== ws.OPEN) return false
    await send(ws, JSON.stringify({ ...events[index], sequence_number: index }))
  }
  return true
}

function dripDelay(fault: Fault | undefined, handshake: IncomingMessage): number {
  if (fault?.kind === 'drip') return fault.delayMs
  return Number(handshake.headers['x-mock-chunk-delay-ms'] ?? 0) || 0
}

/** The error the service sends on a socket: the HTTP error body, wrapped with its status. */
function errorEvent(status: number, message: string, code: string | null, param: string | null): string {
  const type = status >= 500 ? 'server_error' : 'invalid_request_error'
  return JSON.stringify({ type: 'error', status, error: { type, code, message, param } })
}

/** Resolves once the message is handed to the socket, so a slow reader slows the mock down. */
function send(ws: WebSocket, text: string): Promise<void> {
  if (ws.readyState !== ws.OPEN) return Promise.resolve()
  return new Promise((resolve) => ws.send(text, () => resolve()))
}
