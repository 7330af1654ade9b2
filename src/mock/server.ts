import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { anthropicCountTokens, anthropicError, anthropicMessages } from './anthropic-messages.ts'
import { openaiEmbeddings } from './embeddings.ts'
import { faultFromHeader, FaultQueue, faultSchema, type Fault } from './faults.ts'
import { openaiChat, openaiError } from './openai-chat.ts'
import { openaiResponses } from './openai-responses.ts'
import { attachResponsesSocket } from './openai-responses-socket.ts'
import { answerModels } from './models.ts'
import { PromptFingerprints } from './cache-diagnosis.ts'
import { AnthropicPromptCache, OpenAIPromptCache, type CacheWrites } from './prompt-cache.ts'
import type { MockAnswer, MockOptions, MockReplyKind } from './types.ts'
import { statusFault, type Provider } from './status-fault.ts'
import { UsageLedger } from './usage-ledger.ts'

export interface MockServerOptions {
  readonly host?: string
  readonly port?: number
  /** Context window in the mock's tokens, for every model (default 200,000). */
  readonly window?: number
  /** Shortest cacheable Anthropic prefix (default 1,024). */
  readonly minCacheableTokens?: number
  /** How many requests the log keeps (default 500). */
  readonly logLimit?: number
  readonly now?: () => number
  /** Agent tool loop: requests offering a shell-like tool get this many tool calls, then a final answer. */
  readonly agentSteps?: number
  /** With agentSteps: every N-th step re-reads a file read many steps before (Messages and Chat Completions). */
  readonly agentRereadEvery?: number
  /** How a marker inside the prefix just read is taken (default `literal`: it writes an entry). */
  readonly cacheWrites?: CacheWrites
  /** Refuse a request whose prompt plus max_tokens exceeds the window, as the APIs do (default true). */
  readonly replyRoomInWindow?: boolean
}

export interface RecordedRequest {
  readonly sequence: number
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
  readonly body: string
  /** Set when the connection closed before the mock finished its answer. */
  closedEarly: boolean
  finished: boolean
  /** The status the mock answered with, once it did. */
  status?: number
}

export interface MockServer {
  readonly url: string
  readonly port: number
  readonly faults: FaultQueue
  readonly requests: RecordedRequest[]
  /** What the chat answers billed (also at `GET /_mock/usage`). */
  readonly usage: UsageLedger
  /** Forgets the request log, queued faults, the usage ledger, both prompt caches and the prompts kept for cache diagnosis. */
  reset(): void
  close(): Promise<void>
}

/** A fake Anthropic + OpenAI upstream with faithful usage and prompt caching, for tests, demos and replay. */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const anthropicCache = new AnthropicPromptCache(options.now, options.cacheWrites)
  const fingerprints = new PromptFingerprints()
  const openaiCache = new OpenAIPromptCache()
  const faults = new FaultQueue()
  const usage = new UsageLedger()
  const requests: RecordedRequest[] = []
  const logLimit = options.logLimit ?? 500
  const mockOptions: MockOptions = {
    windowFor: () => options.window ?? 200_000,
    minCacheableFor: () => options.minCacheableTokens ?? 1_024,
    replyText: (sequence) => `This is reply ${sequence} from the ctxgate mock upstream. The work continues as planned.`,
    ...(options.agentSteps !== undefined ? { agentSteps: options.agentSteps } : {}),
    ...(options.agentRereadEvery !== undefined ? { agentRereadEvery: options.agentRereadEvery } : {}),
    ...(options.replyRoomInWindow !== undefined ? { replyRoomInWindow: options.replyRoomInWindow } : {}),
  }
  let sequence = 0
  const responsesTurn = { options: mockOptions, cache: openaiCache, agentSteps: options.agentSteps ?? 0 }

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const record: RecordedRequest = {
        sequence: ++sequence,
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        closedEarly: false,
        finished: false,
      }
      if (!isAdminPath(record.url)) {
        requests.push(record)
        if (requests.length > logLimit) requests.splice(0, requests.length - logLimit)
      }
      response.on('close', () => {
        if (!response.writableFinished) record.closedEarly = true
      })
      // The fake upstream answers nonsense the way the real API does: a 400, never a dropped connection.
      handle(record, request, response).catch((error: unknown) => {
        if (response.headersSent) return void response.destroy()
        const provider: Provider =
          record.url.startsWith('/v1/messages') || request.headers['anthropic-version'] !== undefined
            ? 'anthropic'
            : 'openai'
        const message = `Invalid request: ${error instanceof Error ? error.message : String(error)}`
        void send(
          response,
          provider === 'anthropic'
            ? anthropicError(400, 'invalid_request_error', message)
            : openaiError(400, 'invalid_request_error', message, null),
          record,
        )
      })
    })
  })

  const responsesSockets = attachResponsesSocket(server, {
    turn: responsesTurn,
    faults,
    record: (handshake, body) => {
      const record: RecordedRequest = {
        sequence: ++sequence,
        method: 'WS',
        url: handshake.url ?? '/',
        headers: handshake.headers,
        body,
        closedEarly: false,
        finished: false,
      }
      requests.push(record)
      if (requests.length > logLimit) requests.splice(0, requests.length - logLimit)
      return { sequence: record.sequence, finished: () => void (record.finished = true) }
    },
    recordUsage: (answered) => usage.record(answered),
  })

  const handle = async (record: RecordedRequest, request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = record.url.split('?')[0] ?? '/'
    // Echo answers on any prefix, so passthrough tests can see what ctxgate sent.
    if (/^(\/v1)?\/_mock\/echo/.test(path)) return echo(record, response)
    // The compose file's healthcheck and process managers ask here, as they do ctxgate.
    if (path === '/healthz') return send(response, { status: 200, json: { status: 'ok' } }, record)
    if (path.startsWith('/_mock/')) return admin(path, record, response)
    const provider: Provider =
      path.startsWith('/v1/messages') || request.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai'
    const fault = faults.next() ?? faultFromHeader(request.headers['x-mock-fault'])
    if (fault?.kind === 'reset') return void request.socket.destroy()
    if (fault?.kind === 'hang') return
    if (fault?.kind === 'status') return send(response, statusFault(provider, fault), record)
    if (fault?.kind === 'reset-after-headers') {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.flushHeaders()
      await sleep(5)
      return void response.destroy()
    }
    if (fault?.kind === 'not-json')
      return send(
        response,
        { status: 200, json: undefined, headers: { 'content-type': 'application/json' } },
        record,
        '<html>oops</html>',
      )

    let body: unknown
    try {
      body = record.body.length > 0 ? JSON.parse(record.body) : undefined
    } catch {
      return send(
        response,
        provider === 'anthropic'
          ? anthropicError(400, 'invalid_request_error', 'There was an error parsing the body of your request as JSON.')
          : openaiError(400, 'invalid_request_error', 'We could not parse the JSON body of your request.', null),
        record,
      )
    }
    const replyKind: MockReplyKind = request.headers['x-mock-reply'] === 'tool_use' ? 'tool_use' : 'text'
    const answer = answerFor(record, path, body, replyKind, provider)
    usage.record(answer.usage)
    const delayMs = fault?.kind === 'drip' ? fault.delayMs : Number(request.headers['x-mock-chunk-delay-ms'] ?? 0)
    return send(response, answer, record, undefined, { delayMs, fault })
  }

  const answerFor = (
    record: RecordedRequest,
    path: string,
    body: unknown,
    replyKind: MockReplyKind,
    provider: Provider,
  ): MockAnswer => {
    const { method, sequence: number } = record
    if (method === 'POST' && path === '/v1/messages')
      return anthropicMessages(body, mockOptions, anthropicCache, replyKind, number, {
        headers: record.headers,
        fingerprints,
      })
    if (method === 'POST' && path === '/v1/messages/count_tokens') return anthropicCountTokens(body, mockOptions)
    if (method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions'))
      return openaiChat(body, mockOptions, openaiCache, replyKind, number)
    if (method === 'POST' && (path === '/v1/responses' || path === '/responses'))
      return openaiResponses(body, { ...responsesTurn, replyKind, sequence: number })
    if (method === 'POST' && (path === '/v1/embeddings' || path === '/embeddings')) return openaiEmbeddings(body)
    const models = answerModels(method, path, provider)
    if (models) return models
    return provider === 'anthropic'
      ? anthropicError(404, 'not_found_error', `Not found: ${method} ${path}`)
      : openaiError(404, 'invalid_request_error', `Invalid URL (${method} ${path})`, null)
  }

  const admin = async (path: string, record: RecordedRequest, response: ServerResponse): Promise<void> => {
    if (path === '/_mock/faults' && record.method === 'POST') {
      const parsed = faultSchema.array().safeParse((JSON.parse(record.body || '{}') as { faults?: unknown }).faults)
      if (!parsed.success) return send(response, { status: 400, json: { error: parsed.error.message } }, record)
      faults.push(parsed.data)
      return send(response, { status: 200, json: { queued: faults.size } }, record)
    }
    if (path === '/_mock/requests') return send(response, { status: 200, json: requests }, record)
    if (path === '/_mock/usage') return send(response, { status: 200, json: usage.totals() }, record)
    if (path === '/_mock/reset' && record.method === 'POST') {
      reset()
      return send(response, { status: 200, json: { reset: true } }, record)
    }
    return send(response, { status: 404, json: { error: 'unknown mock admin path' } }, record)
  }

  const reset = (): void => {
    requests.length = 0
    faults.clear()
    usage.clear()
    anthropicCache.clear()
    fingerprints.clear()
    openaiCache.clear()
  }

  await new Promise<void>((resolve, reject) => {
    // A taken port is an 'error' event, not an exception: hand it to the caller to explain.
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    faults,
    requests,
    usage,
    reset,
    close: () =>
      new Promise<void>((resolve) => {
        responsesSockets.terminateAll()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function isAdminPath(url: string): boolean {
  return (url.startsWith('/_mock/') && !url.startsWith('/_mock/echo')) || url === '/healthz'
}

function echo(record: RecordedRequest, response: ServerResponse): Promise<void> {
  const status = Number(record.headers['x-echo-status'] ?? 200)
  return send(
    response,
    {
      status,
      json: { method: record.method, url: record.url, headers: record.headers, body: record.body },
      headers: { 'x-echo-response': 'yes', 'set-cookie': 'session=1; Path=/' },
    },
    record,
  )
}

interface SendOptions {
  readonly delayMs: number
  readonly fault: Fault | undefined
}

async function send(
  response: ServerResponse,
  answer: MockAnswer,
  record: RecordedRequest,
  rawBody?: string,
  options: SendOptions = { delayMs: 0, fault: undefined },
): Promise<void> {
  record.status = answer.status
  if ('json' in answer) {
    const body = rawBody ?? JSON.stringify(answer.json)
    response.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'request-id': `req_mock_${record.sequence}`,
      'x-request-id': `req_mock_${record.sequence}`,
      ...answer.headers,
    })
    response.end(body)
    record.finished = true
    return
  }
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    // Each API's own request-id header, as on the JSON answers above.
    'request-id': `req_mock_${record.sequence}`,
    'x-request-id': `req_mock_${record.sequence}`,
  })
  const { fault } = options
  for (let index = 0; index < answer.sse.length; index++) {
    if (response.destroyed) return
    if (fault && 'afterFrames' in fault && index === fault.afterFrames) {
      // Let the frames already written reach the peer first, so the failure is truly mid-stream.
      await sleep(20)
      if (fault.kind === 'reset-mid-stream') return void response.destroy()
      if (fault.kind === 'stall-mid-stream') return
      if (fault.kind === 'error-mid-stream') {
        const anthropic = (answer.sse[0] ?? '').startsWith('event:')
        response.end(
          anthropic
            ? 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
            : 'data: {"error":{"message":"Overloaded","type":"server_error","param":null,"code":null}}\n\n',
        )
        record.finished = true
        return
      }
    }
    if (index > 0 && options.delayMs > 0) await sleep(options.delayMs)
    response.write(answer.sse[index])
  }
  response.end()
  record.finished = true
}
