import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from '../config/schema.ts'
import { forward } from '../forward/forward.ts'
import type { ClientRequestView, ForwardDeps } from '../forward/forward-types.ts'
import { LazyChildLogger } from '../log/lazy-child-logger.ts'
import type { PrepareBody } from '../request/prepared.ts'
import type { WireFormat } from '../providers/provider-contract.ts'
import { modelRoutes, type ModelRoute } from '../providers/registry.ts'
import { answerUnreadableRequest } from './unreadable-request.ts'

/**
 * Model calls straight from node:http: the same forwarding, without fastify's routing, request and
 * reply objects and body parser, which cost about 0.1 ms of a 2 KB call (docs/hot-path.md). Only a
 * plain call is taken (POST to a model route's exact path, JSON with a declared length within the
 * body limit, no client tokens to check, not shutting down); everything else goes to fastify's
 * routes, which stay registered and answer the same way.
 */
export interface FastPathDeps {
  readonly config: Readonly<Config>
  readonly forward: ForwardDeps
  readonly prepareFor: (format: WireFormat) => PrepareBody | undefined
  readonly logger: Logger
  readonly isReady: () => boolean
  /** The same request ids fastify gives its own requests (app.ts passes one generator to both). */
  readonly requestId: () => string
}

/** fastify's own request ids (`req-1`, `req-2`… in base 36, wrapping below 2^31), from one counter for both paths. */
export function requestIdGenerator(): () => string {
  let next = 0
  return () => {
    next = (next + 1) & 0x7fffffff
    return `req-${next.toString(36)}`
  }
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void

/** Puts the fast path in front of fastify's handler on `server`; `deps` is read once the routes exist. */
export function installModelCallFastPath(server: Server, deps: () => FastPathDeps | undefined): void {
  const [fastifyHandler] = server.listeners('request') as Handler[]
  if (!fastifyHandler) return
  let take: ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined
  server.removeListener('request', fastifyHandler)
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (take === undefined) {
      const ready = deps()
      if (ready) take = modelCallTaker(ready)
    }
    if (!take?.(request, response)) fastifyHandler(request, response)
  })
}

function modelCallTaker(deps: FastPathDeps): (request: IncomingMessage, response: ServerResponse) => boolean {
  const routes = new Map<string, { readonly route: ModelRoute; readonly prepare: PrepareBody | undefined }>(
    modelRoutes.map((route) => [route.path, { route, prepare: deps.prepareFor(route.format.name) }]),
  )
  const bodyLimit = deps.config.server.bodyLimitBytes
  const guarded = deps.config.auth.tokens.length > 0
  return (request, response) => {
    if (request.method !== 'POST' || guarded || !deps.isReady()) return false
    const url = request.url ?? ''
    const query = url.indexOf('?')
    const found = routes.get(query === -1 ? url : url.slice(0, query))
    if (!found || !isPlainJsonBody(request, bodyLimit)) return false
    readBody(deps, found, request, response, url)
    return true
  }
}

/** A JSON body with a declared length between 1 byte and the limit; anything else is fastify's to judge. */
function isPlainJsonBody(request: IncomingMessage, bodyLimit: number): boolean {
  const { headers } = request
  if (headers['transfer-encoding'] !== undefined) return false
  const length = headers['content-length']
  if (length === undefined || !/^[1-9]\d{0,15}$/.test(length) || Number(length) > bodyLimit) return false
  const type = headers['content-type']
  return type !== undefined && /^application\/json\s*(?:;\s*charset=utf-8\s*)?$/i.test(type)
}

function readBody(
  deps: FastPathDeps,
  { route, prepare }: { readonly route: ModelRoute; readonly prepare: PrepareBody | undefined },
  raw: IncomingMessage,
  response: ServerResponse,
  url: string,
): void {
  const id = deps.requestId()
  const request: ClientRequestView = { id, method: 'POST', url, headers: raw.headers, raw }
  const reply = { raw: response, hijack: () => undefined }
  const chunks: Buffer[] = []
  let received = 0
  const failed = (error: Error): void => {
    const log = new LazyChildLogger(deps.logger as FastifyBaseLogger, { reqId: id }, {})
    answerUnreadableRequest(
      error,
      { log, url, bodyLimit: deps.config.server.bodyLimitBytes, response },
      route.format.provider,
    )
  }
  raw.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    received += chunk.length
  })
  raw.once('error', failed)
  raw.once('end', () => {
    raw.off('error', failed)
    if (received !== Number(raw.headers['content-length'])) {
      failed(new Error('Request body size did not match Content-Length'))
      return
    }
    // Copied, as fastify does: the chunks are views of the socket's read buffer.
    const body = Buffer.concat(chunks, received)
    void forward(deps.forward, { request, reply, provider: route.format.provider, format: route.format, body, prepare })
  })
}
