import type { Readable } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config/schema.ts'
import { CtxgateError } from '../errors.ts'
import type { PrepareBody } from '../request/prepared.ts'
import type { Provider, WireFormat } from '../providers/provider-contract.ts'
import { modelRoutes, providerForPassthrough, providers, type ModelRoute } from '../providers/registry.ts'
import { createTokenCheck } from '../security/tokens.ts'
import { forward } from '../forward/forward.ts'
import type { ForwardDeps } from '../forward/forward-types.ts'
import { writeError } from '../forward/write-error.ts'
import type { UpstreamId } from '../providers/upstream-ids.ts'
import { firstHeader } from '../util/headers.ts'
import { answerUnreadableRequest } from './unreadable-request.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    upstream?: UpstreamId
  }
}

export interface ProxyRouteDeps {
  readonly config: Readonly<Config>
  readonly forward: ForwardDeps
  readonly prepareFor: (format: WireFormat) => PrepareBody | undefined
}

/** The proxied routes: each wire format's model calls, then everything else as passthrough. */
export async function registerProxyRoutes(server: FastifyInstance, deps: ProxyRouteDeps): Promise<void> {
  const requireClientToken = clientTokenCheck(deps.config)
  // No tokens configured: no hook at all, rather than one more async step on every request.
  const guarded = deps.config.auth.tokens.length > 0
  // Model calls: read whole (they may be rewritten), bounded by bodyLimitBytes.
  await server.register(async (scope) => {
    if (guarded) scope.addHook('onRequest', requireClientToken)
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
    scope.setErrorHandler(providerShapedErrors)
    for (const route of modelRoutes) {
      const prepare = deps.prepareFor(route.format.name)
      scope.post(route.path, { config: { upstream: route.format.provider.upstream } }, (request, reply) =>
        forwardModelCall(deps.forward, route, prepare, request, reply),
      )
    }
  })

  // Everything else (models list, files, batches…): streamed through untouched.
  await server.register(async (scope) => {
    if (guarded) scope.addHook('onRequest', requireClientToken)
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null))
    scope.setErrorHandler(providerShapedErrors)
    // ctxgate's own namespace never reaches an upstream (nor does the live page's cookie with it).
    const notHere = adminNotHere(deps.config)
    scope.all('/ctxgate/*', notHere)
    if (deps.config.metrics.port !== null) {
      // With a metrics port, a scrape sent here must not become three upstream attempts.
      scope.all('/metrics', notHere)
      scope.all('/ctxgate', notHere)
    }
    scope.all('/*', (request, reply) =>
      forward(deps.forward, {
        request,
        reply,
        provider: providerForPassthrough(request.url, request.headers),
        body: hasBody(request) ? (request.raw as Readable) : null,
      }),
    )
  })
}

/** The 404 for ctxgate's own paths on the proxy port: it says where they are served. */
function adminNotHere(
  config: Readonly<Config>,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const port = config.metrics.port
  const error =
    port === null
      ? 'no such ctxgate endpoint (see /ctxgate/, /ctxgate/sessions, /metrics)'
      : `not served on the proxy port: /metrics, /ctxgate/sessions and the live page /ctxgate/ are on the metrics port (metrics.port, CTXGATE_METRICS_PORT: ${port}) at ${config.metrics.host}`
  return async (_request, reply) => reply.code(404).send({ error })
}

/** Client authentication, when configured, guards every proxied route (not health or admin). */
function clientTokenCheck(config: Readonly<Config>): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const clientAllowed = createTokenCheck(config.auth.tokens)
  return async (request, reply) => {
    if (config.auth.tokens.length === 0) return
    if (clientAllowed(firstHeader(request.headers['x-ctxgate-auth']))) return
    reply.hijack()
    const error = new CtxgateError(
      'CTXGATE_UNAUTHORIZED',
      'ctxgate requires a valid x-ctxgate-auth header on this deployment',
    )
    writeError(reply.raw, providerOf(request).errorShape, error, { doNotRetry: true })
  }
}

function providerOf(request: FastifyRequest): Provider {
  const upstream = request.routeOptions.config.upstream
  return upstream ? providers[upstream] : providerForPassthrough(request.url, request.headers)
}

function forwardModelCall(
  deps: ForwardDeps,
  route: ModelRoute,
  prepare: PrepareBody | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
  return forward(deps, { request, reply, provider: route.format.provider, format: route.format, body, prepare })
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/** Errors fastify raises while reading a request (too large, bad length), in the provider's own shape. */
function providerShapedErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack()
  const at = {
    log: request.log,
    url: request.url,
    bodyLimit: request.server.initialConfig.bodyLimit ?? 0,
    response: reply.raw,
  }
  answerUnreadableRequest(error, at, providerOf(request))
}
