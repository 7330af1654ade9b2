import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import type { Config } from '../config/schema.ts'
import type { ForwardDeps } from '../forward/forward-types.ts'
import { registerLiveRoutes } from '../live/live-routes.ts'
import type { LiveRecorder } from '../live/live-recorder.ts'
import type { PrepareBody } from '../request/prepared.ts'
import type { WireFormat } from '../providers/provider-contract.ts'
import { adminHostCheck } from '../security/host-check.ts'
import type { SessionTotalsStore } from '../session/accounting.ts'
import { compareArms } from '../session/holdout-compare.ts'
import type { SessionStore } from '../session/session-store.ts'
import { holdoutSessions, registerAdminRoutes } from './admin-routes.ts'
import { installModelCallFastPath } from './model-call-fast-path.ts'
import { registerProxyRoutes } from './proxy-routes.ts'

export interface RouteDeps {
  readonly config: Readonly<Config>
  readonly registry: Registry
  readonly sessions: SessionTotalsStore
  readonly live: LiveRecorder
  readonly store: SessionStore
  /** False once the app is shutting down. */
  readonly isReady: () => boolean
  readonly forward: ForwardDeps
  readonly prepareFor: (format: WireFormat) => PrepareBody | undefined
}

/**
 * Every HTTP route of the proxy port, registered from here: health, ctxgate's own endpoints (unless
 * they have a listener of their own), each wire format's model calls, then passthrough. The
 * Responses WebSocket upgrades beside them (websocket/attach.ts).
 */
export async function registerRoutes(server: FastifyInstance, deps: RouteDeps): Promise<void> {
  registerHealth(server, deps.store, deps.isReady)
  if (deps.config.metrics.port === null) registerOwnRoutes(server, deps)
  await registerProxyRoutes(server, { config: deps.config, forward: deps.forward, prepareFor: deps.prepareFor })
  // Plain model calls skip fastify's per-request work; the routes above answer every other request.
  const { config, forward, prepareFor, isReady } = deps
  installModelCallFastPath(server, { config, forward, prepareFor, isReady })
}

/** ctxgate's own endpoints: /metrics, /ctxgate/sessions and the live page, behind the admin Host check. */
export function registerOwnRoutes(target: FastifyInstance, deps: RouteDeps): void {
  const { config, sessions } = deps
  const hostCheck = adminHostCheck(config)
  if (hostCheck) target.addHook('onRequest', hostCheck)
  registerAdminRoutes(target, {
    registry: deps.registry,
    sessions,
    token: config.metrics.token,
    finishedAfterMs: config.sessions.idleTtlMs,
  })
  registerLiveRoutes(target, {
    recorder: deps.live,
    token: config.metrics.token,
    limits: config.live,
    registry: deps.registry,
    holdout: async () => compareArms(await sessions.list(holdoutSessions), Date.now(), config.sessions.idleTtlMs),
  })
}

/** Liveness, and readiness with the session store's state (an unreachable store degrades, never stops, serving). */
function registerHealth(server: FastifyInstance, store: SessionStore, isReady: () => boolean): void {
  server.get('/healthz', async () => ({ status: 'ok' }))
  // Neither API serves anything at the bare root; clients probe it to warm a connection (Claude Code
  // sends `HEAD /` with no credentials), so it is answered here rather than sent to a guessed upstream.
  server.route({ method: ['GET', 'HEAD'], url: '/', handler: async () => ({ service: 'ctxgate', status: 'ok' }) })
  server.get('/readyz', async (_request, reply) => {
    if (!isReady()) return reply.code(503).send({ status: 'shutting down' })
    // An unreachable store degrades rewriting (no shared decisions) but never stops serving.
    const circuit = store.circuitState?.()
    const repaired = store.repairedKeys?.()
    return {
      status: 'ready',
      store: store.kind,
      storeReachable: store.healthy(),
      ...(circuit ? { circuit } : {}),
      ...(repaired ? { storeKeysRepaired: repaired } : {}),
    }
  })
}
