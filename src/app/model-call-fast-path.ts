import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../config/schema.ts'
import { forward } from '../forward/forward.ts'
import type { ClientRequestView, ForwardDeps } from '../forward/forward-types.ts'
import { LazyChildLogger } from '../log/lazy-child-logger.ts'
import type { PrepareBody } from '../request/prepared.ts'
import type { WireFormat } from '../providers/provider-contract.ts'
import { modelRoutes, type ModelRoute } from '../providers/registry.ts'
import { answerUnreadableRequest } from './unreadable-request.ts'

/** What the fast path forwards with: the proxy routes' own dependencies. */
export interface FastPathDeps {
  readonly config: Readonly<Config>
  readonly forward: ForwardDeps
  readonly prepareFor: (format: WireFormat) => PrepareBody | undefined
  readonly isReady: () => boolean
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void

/**
 * Model calls straight from node:http: the same forwarding, without fastify's routing, request and
 * reply objects and body parser, which cost about 0.1 ms of a 2 KB call (docs/proxy.md, the hot path). Only a
 * plain call is taken (POST to a model route's exact path, JSON with a declared length within the
 * body limit, no client tokens to check, not shutting down); everything else goes to fastify's
 * routes, which stay registered and answer the same way. Installed once the routes are registered.
 */
export function installModelCallFastPath(server: FastifyInstance, deps: FastPathDeps): void {
  const [fastifyHandler] = server.server.listeners('request') as Handler[]
  if (!fastifyHandler) return
  // fastify's own request ids (`req-1`, `req-2`…), so both paths count on one counter.
  const { genReqId } = server as unknown as { readonly genReqId: (request: IncomingMessage) => string }
  const take = modelCallTaker({ ...deps, requestId: (request) => genReqId.call(server, request) })
  server.server.removeListener('request', fastifyHandler)
  server.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!take(request, response)) fastifyHandler(request, response)
  })
}

interface TakerDeps extends FastPathDeps {
  readonly requestId: (request: IncomingMessage) => string
}

function modelCallTaker(deps: TakerDeps): (request: IncomingMessage, response: ServerResponse) => boolean {
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
  deps: TakerDeps,
  { route, prepare }: { readonly route: ModelRoute; readonly prepare: PrepareBody | undefined },
  raw: IncomingMessage,
  response: ServerResponse,
  url: string,
): void {
  const id = deps.requestId(raw)
  const request: ClientRequestView = { id, method: 'POST', url, headers: raw.headers, raw }
  const reply = { raw: response, hijack: () => undefined }
  const chunks: Buffer[] = []
  let received = 0
  const failed = (error: Error): void => {
    const log = new LazyChildLogger(deps.forward.logger as FastifyBaseLogger, { reqId: id }, {})
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
