import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { Registry } from 'prom-client'
import type { Config } from './config/schema.ts'
import { trackConnections } from './connection-drain.ts'
import { LazyChildLogger } from './log/lazy-child-logger.ts'
import { createLogger } from './log/logger.ts'
import { createProxyMetrics } from './metrics/proxy-metrics.ts'
import { ModelLabels } from './metrics/model-labels.ts'
import { registerHoldoutMetrics } from './metrics/holdout-metrics.ts'
import { VirtualClients } from './session/client-counterfactual.ts'
import { reportUnknownModels } from './metrics/unknown-models.ts'
import { createLiveRecorder } from './live/live-recorder.ts'
import type { PrepareBody } from './request/prepared.ts'
import type { WireFormat } from './providers/provider-contract.ts'
import { exactCounters, socketFormat } from './providers/registry.ts'
import type { ForwardDeps } from './forward/forward-types.ts'
import { createRewriteHook } from './forward/rewrite-hook/hook.ts'
import { RewriteWorkers } from './forward/rewrite-workers/pool.ts'
import { registerRewriteWorkerMetrics } from './forward/rewrite-workers/pool-metrics.ts'
import { holdoutSessions } from './app/admin-routes.ts'
import { Calibration } from './calibration/calibration.ts'
import { DeadWriteTracker } from './model-call/dead-writes.ts'
import { TokenEstimator, withoutReference } from './rewrite/estimate.ts'
import type { SessionStore } from './session/session-store.ts'
import { closeUpstreams, createUpstreams } from './upstream/dispatcher.ts'
import type { Upstreams } from './providers/registry.ts'
import { clientErrorAnswerer } from './app/client-errors.ts'
import { registerOwnRoutes, registerRoutes, type RouteDeps } from './app/routes.ts'
import { OpenStreams } from './stream/open-streams.ts'
import { attachWebSockets } from './websocket/attach.ts'
import { HistoryBudget } from './websocket/history-budget.ts'
import { registerHistoryMetrics, registerPreparationMetrics } from './websocket/history-metrics.ts'
import { socketMemoryBudget } from './websocket/memory-budget.ts'
import { registerStoreCircuitGauge } from './session/store-metrics.ts'
import { readAfterSendingFor } from './forward/read-after-sending.ts'
import { createSessionStores, type SessionStores } from './app/session-stores.ts'
import type { Telemetry } from './telemetry/telemetry.ts'

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
  /** OpenTelemetry export (src/telemetry/start-telemetry.ts); off when absent. Flushed and stopped on close. */
  readonly telemetry?: Telemetry
}

export interface App {
  readonly server: FastifyInstance
  readonly registry: Registry
  /** Resolves true once the app has loaded and can serve; false while shutting down. */
  readonly isReady: () => boolean
  /** Mounts /metrics and /ctxgate/sessions on another server (the separate metrics listener). */
  readonly registerAdmin: (target: FastifyInstance) => void
  /**
   * The shutdown grace is over: event streams end with an error event in their provider's format,
   * WebSockets with a close frame (1001). Resolves once that has been sent (at most `waitMs`).
   */
  readonly endInFlight: (waitMs?: number) => Promise<{ streams: number; sockets: number }>
}

/** Builds the proxy without listening, so tests and the CLI choose the port. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { config } = deps
  const logger = deps.logger ?? createLogger(config.log.level)
  const registry = deps.registry ?? new Registry()
  const upstreams = deps.upstreams ?? createUpstreams(config)
  let stores: SessionStores | undefined
  const metrics = createProxyMetrics(registry, () => stores?.store.size() ?? 0)
  reportUnknownModels(config, metrics, logger)
  stores = createSessionStores(config, deps.store, metrics, logger)
  const { store, totals: sessions } = stores
  if (store.circuitState && stores.calibration) registerStoreCircuitGauge(registry, store.circuitState.bind(store))
  const live = createLiveRecorder(config, registry)
  const openStreams = new OpenStreams()
  registerHoldoutMetrics(registry, sessions, { finishedAfterMs: config.sessions.idleTtlMs, read: holdoutSessions })
  const forwardDeps: ForwardDeps = {
    config,
    upstreams,
    metrics,
    models: new ModelLabels(),
    sessions,
    prices: config.economy.prices,
    virtualClients: new VirtualClients(),
    deadWrites: new DeadWriteTracker(config.sessions.maxEntries),
    logger,
    sharedState: store.kind !== 'memory',
    live,
    telemetry: deps.telemetry,
    openStreams,
    readAfterSending: readAfterSendingFor(config, { ownHook: deps.prepareFor === undefined }),
  }
  const workers = config.rewriteWorkers.threads > 0 ? new RewriteWorkers(config, config.rewriteWorkers) : undefined
  if (workers) registerRewriteWorkerMetrics(registry, workers)
  const prepareFor =
    deps.prepareFor ??
    createRewriteHook({
      config,
      store,
      calibration: new Calibration(stores.calibration, { ttlMs: config.sessions.idleTtlMs, now: Date.now }),
      estimator: new TokenEstimator(config.rewrite.referenceCount ? exactCounters : withoutReference(exactCounters)),
      logger,
      ...(workers ? { workers } : {}),
    })

  const server = createServer(config, logger)
  const lifecycle = registerLifecycle(server, async () => {
    await closeUpstreams(upstreams)
    await store.close?.()
    await live.close()
    await deps.telemetry?.shutdown()
    await workers?.close()
  })
  const historyBudget = new HistoryBudget(config.websocket.maxHistoryBytes)
  registerHistoryMetrics(registry, historyBudget)
  const sockets = attachWebSockets(server, { ...forwardDeps, prepare: prepareFor(socketFormat.name), historyBudget })
  registerPreparationMetrics(registry, sockets.preparation, socketMemoryBudget(config))
  const routes: RouteDeps = {
    config,
    registry,
    sessions,
    live,
    store,
    isReady: lifecycle.isReady,
    forward: forwardDeps,
    prepareFor,
  }
  const registerAdmin = (target: FastifyInstance): void => registerOwnRoutes(target, routes)
  await registerRoutes(server, routes)
  const endInFlight = async (waitMs = 1_000): Promise<{ streams: number; sockets: number }> => {
    const streams = openStreams.cutAll()
    return { streams, sockets: await sockets.closeAll(waitMs) }
  }
  return { server, registry, registerAdmin, isReady: lifecycle.isReady, endInFlight }
}

function createServer(config: Readonly<Config>, logger: Logger): FastifyInstance {
  return Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // ctxgate writes its own single line per request (forward/forward.ts).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (parent, bindings, options) => new LazyChildLogger(parent, bindings, options),
    bodyLimit: config.server.bodyLimitBytes,
    exposeHeadRoutes: false,
    // Agents keep one connection for hours; load balancers idle out around 60 s.
    keepAliveTimeout: 75_000,
    // Bounds receiving a request (headers and body), not the answer: slow senders get 408.
    requestTimeout: config.server.requestTimeoutMs,
    http: receiveLimits(config.server.requestTimeoutMs),
    return503OnClosing: true,
    clientErrorHandler: clientErrorAnswerer(logger),
  })
}

/** Drains connections on close and then releases what the app holds; says whether it still serves. */
function registerLifecycle(server: FastifyInstance, release: () => Promise<void>): { isReady: () => boolean } {
  let closing = false
  const connections = trackConnections(server.server)
  server.addHook('preClose', async () => {
    closing = true
    connections.drain()
  })
  server.addHook('onClose', release)
  return { isReady: () => !closing }
}

/** Node checks request deadlines on an interval (30 s by default): check often enough for short limits too. */
function receiveLimits(requestTimeoutMs: number): { connectionsCheckingInterval: number; headersTimeout: number } {
  return {
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(requestTimeoutMs / 4))),
    headersTimeout: Math.min(60_000, requestTimeoutMs),
  }
}
