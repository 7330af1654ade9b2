import type { Readable } from 'node:stream'
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify'
import type { Logger } from 'pino'
import { Registry } from 'prom-client'
import type { Config } from './config/schema.ts'
import { trackConnections } from './connection-drain.ts'
import { CtxgateError } from './errors.ts'
import { createLogger } from './log/logger.ts'
import { createProxyMetrics, ModelLabels } from './metrics/proxy-metrics.ts'
import { reportUnknownModels } from './metrics/unknown-models.ts'
import { SessionAccounting, type SessionTotalsStore } from './session/accounting.ts'
import { RedisSessionStore } from './session/redis-store.ts'
import { registerStoreCircuitGauge } from './session/store-metrics.ts'
import { createTokenCheck } from './security/tokens.ts'
import {
  errorShapes,
  modelRoutes,
  upstreamForPassthrough,
  type ModelRoute,
  type WireFormat,
} from './providers/routes.ts'
import { forward, writeError, type ForwardDeps, type PrepareBody } from './routes/forward.ts'
import { createRewriteHook } from './routes/rewrite-hook.ts'
import { registerAdminRoutes } from './routes/admin.ts'
import { createLiveRecorder } from './live/live-recorder.ts'
import { registerLiveRoutes } from './live/live-routes.ts'
import { Calibration } from './rewrite/calibration.ts'
import { TokenEstimator } from './rewrite/estimate.ts'
import { MemorySessionStore } from './session/memory-store.ts'
import type { SessionStore } from './session/session-store.ts'
import { closeUpstreams, createUpstreams, type UpstreamId, type Upstreams } from './upstream/dispatcher.ts'
import { attachWebSockets } from './websocket/attach.ts'

export interface AppDeps {
  readonly config: Readonly<Config>
  readonly logger?: Logger
  /** Metrics registry; a fresh one is made when absent (tests read it directly). */
  readonly registry?: Registry
  readonly upstreams?: Upstreams
  /** Chooses how a model call's body is prepared; the rewrite engine by default. */
  readonly prepareFor?: (format: WireFormat) => PrepareBody | undefined
  /** Where conversation state lives; memory by default. */
  readonly store?: SessionStore
}

export interface App {
  readonly server: FastifyInstance
  readonly registry: Registry
  /** Resolves true once the app has loaded and can serve; false while shutting down. */
  readonly isReady: () => boolean
  /** Mounts /metrics and /ctxgate/sessions on another server (the separate metrics listener). */
  readonly registerAdmin: (target: FastifyInstance) => void
}

declare module 'fastify' {
  interface FastifyContextConfig {
    upstream?: UpstreamId
  }
}

/** Builds the proxy without listening, so tests and the CLI choose the port. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { config } = deps
  const logger = deps.logger ?? createLogger(config.log.level)
  const registry = deps.registry ?? new Registry()
  const upstreams = deps.upstreams ?? createUpstreams(config)
  let store: SessionStore
  const metrics = createProxyMetrics(registry, () => store.size())
  reportUnknownModels(config, metrics, logger)
  const shared = deps.store ? undefined : createSharedStore(config, metrics, logger)
  if (shared) registerStoreCircuitGauge(registry, () => shared.circuitState())
  store = deps.store ?? shared ?? new MemorySessionStore(config.sessions)
  const sessions: SessionTotalsStore = shared?.totals ?? new SessionAccounting(config.sessions.maxEntries)
  const live = createLiveRecorder(config, registry)
  const forwardDeps: ForwardDeps = {
    config,
    upstreams,
    metrics,
    models: new ModelLabels(),
    sessions,
    prices: config.economy.prices,
    logger,
    sharedState: store.kind !== 'memory',
    live,
  }
  const prepareFor =
    deps.prepareFor ??
    createRewriteHook({
      config,
      store,
      calibration: new Calibration(shared?.calibration, { ttlMs: config.sessions.idleTtlMs, now: Date.now }),
      estimator: new TokenEstimator(),
      logger,
    })
  let closing = false

  const server = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // ctxgate writes its own single line per request (routes/forward.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.server.bodyLimitBytes,
    exposeHeadRoutes: false,
    // Agents keep one connection for hours; load balancers idle out around 60 s.
    keepAliveTimeout: 75_000,
    // Bounds receiving a request (headers and body), not the answer: slow senders get 408.
    requestTimeout: config.server.requestTimeoutMs,
    http: receiveLimits(config.server.requestTimeoutMs),
    return503OnClosing: true,
  })
  const connections = trackConnections(server.server)
  server.addHook('preClose', async () => {
    closing = true
    connections.drain()
  })
  server.addHook('onClose', async () => {
    await closeUpstreams(upstreams)
    await store.close?.()
    await live.close()
  })

  attachWebSockets(server, { ...forwardDeps, prepare: prepareFor('openai-responses') })

  server.get('/healthz', async () => ({ status: 'ok' }))
  server.get('/readyz', async (_request, reply) => {
    if (closing) return reply.code(503).send({ status: 'shutting down' })
    // An unreachable store degrades rewriting (no shared decisions) but never stops serving.
    const circuit = store.circuitState?.()
    return { status: 'ready', store: store.kind, storeReachable: store.healthy(), ...(circuit ? { circuit } : {}) }
  })
  const registerAdmin = (target: FastifyInstance): void => {
    registerAdminRoutes(target, { registry, sessions, token: config.metrics.token })
    registerLiveRoutes(target, { recorder: live, token: config.metrics.token })
  }
  if (config.metrics.port === null) registerAdmin(server)

  // Client authentication, when configured, guards every proxied route (not health or admin).
  const clientAllowed = createTokenCheck(config.auth.tokens)
  const requireClientToken = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (config.auth.tokens.length === 0) return
    const presented = request.headers['x-ctxgate-auth']
    if (clientAllowed(Array.isArray(presented) ? presented[0] : presented)) return
    reply.hijack()
    const upstream = request.routeOptions.config.upstream ?? upstreamForPassthrough(request.url, request.headers)
    writeError(
      reply.raw,
      errorShapes[upstream],
      new CtxgateError('CTXGATE_UNAUTHORIZED', 'ctxgate requires a valid x-ctxgate-auth header on this deployment'),
      true,
    )
  }

  // Model calls: read whole (they may be rewritten), bounded by bodyLimitBytes.
  await server.register(async (scope) => {
    scope.addHook('onRequest', requireClientToken)
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
    scope.setErrorHandler(providerShapedErrors)
    for (const route of modelRoutes) {
      const prepare = prepareFor(route.format)
      scope.post(route.path, { config: { upstream: route.upstream } }, (request, reply) =>
        forwardModelCall(forwardDeps, route, prepare, request, reply),
      )
    }
  })

  // Everything else (models list, files, batches…): streamed through untouched.
  await server.register(async (scope) => {
    scope.addHook('onRequest', requireClientToken)
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null))
    scope.setErrorHandler(providerShapedErrors)
    scope.all('/*', (request, reply) =>
      forward(forwardDeps, {
        request,
        reply,
        upstream: upstreamForPassthrough(request.url, request.headers),
        route: 'passthrough',
        body: hasBody(request) ? (request.raw as Readable) : null,
      }),
    )
  })

  return { server, registry, registerAdmin, isReady: () => !closing }
}

/** A Redis store when configured; its failures are counted and logged at most once per interval. */
function createSharedStore(
  config: Readonly<Config>,
  metrics: ReturnType<typeof createProxyMetrics>,
  logger: Logger,
): RedisSessionStore | undefined {
  const url = config.sessions.redisUrl
  if (url === null) return undefined
  let lastLogged = 0
  return new RedisSessionStore({
    url,
    keyPrefix: config.sessions.redisKeyPrefix,
    idleTtlMs: config.sessions.idleTtlMs,
    maxSessions: config.sessions.maxEntries,
    maxStateBytes: config.sessions.maxStateBytes,
    budgetMs: config.sessions.storeBudgetMs,
    breakerThreshold: config.sessions.breakerThreshold,
    breakerCooldownMs: config.sessions.breakerCooldownMs,
    onError: (operation, error) => {
      metrics.storeErrors.inc({ operation })
      const now = Date.now()
      if (now - lastLogged < storeErrorLogIntervalMs) return
      lastLogged = now
      logger.warn(
        { store: 'redis', operation, error: error.message },
        'session store failing; serving without shared state (logged at most every 30 s)',
      )
    },
  })
}

const storeErrorLogIntervalMs = 30_000

function forwardModelCall(
  deps: ForwardDeps,
  route: ModelRoute,
  prepare: PrepareBody | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
  return forward(deps, {
    request,
    reply,
    upstream: route.upstream,
    route: route.format,
    body,
    ...(prepare ? { prepare } : {}),
  })
}

/** Node checks request deadlines on an interval (30 s by default): check often enough for short limits too. */
function receiveLimits(requestTimeoutMs: number): { connectionsCheckingInterval: number; headersTimeout: number } {
  return {
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(requestTimeoutMs / 4))),
    headersTimeout: Math.min(60_000, requestTimeoutMs),
  }
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/** Errors fastify raises while reading a request (too large, bad length), in the provider's own shape. */
function providerShapedErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const upstream = request.routeOptions.config.upstream ?? upstreamForPassthrough(request.url, request.headers)
  const tooLarge = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413
  const ctxError = tooLarge
    ? new CtxgateError(
        'CTXGATE_REQUEST_TOO_LARGE',
        `Request exceeds the maximum size ctxgate accepts (${request.server.initialConfig.bodyLimit} bytes); it was not forwarded.`,
      )
    : new CtxgateError('CTXGATE_INVALID_REQUEST', `ctxgate could not read this request: ${error.message}`)
  request.log.warn({ reqId: request.id, code: ctxError.code, path: request.url.split('?')[0] }, 'request rejected')
  reply.hijack()
  writeError(reply.raw, errorShapes[upstream], ctxError, true)
}
