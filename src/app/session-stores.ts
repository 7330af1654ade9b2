import type { Logger } from 'pino'
import type { Config } from '../config/schema.ts'
import type { ProxyMetrics } from '../metrics/proxy-metrics.ts'
import type { CalibrationSync } from '../calibration/calibration.ts'
import { SessionAccounting, type SessionTotalsStore } from '../session/accounting.ts'
import { MemorySessionStore } from '../session/memory-store.ts'
import { RedisSessionStore } from '../session/redis-store.ts'
import type { SessionStore } from '../session/session-store.ts'

/** Where the app keeps conversation state, session totals and what calibration learned. */
export interface SessionStores {
  readonly store: SessionStore
  readonly totals: SessionTotalsStore
  /** Set when replicas share what they learn (a Redis store). */
  readonly calibration?: CalibrationSync
}

/** The given store, or Redis when configured, or memory. */
export function createSessionStores(
  config: Readonly<Config>,
  given: SessionStore | undefined,
  metrics: ProxyMetrics,
  logger: Logger,
): SessionStores {
  const shared = given ? undefined : createSharedStore(config, metrics, logger)
  return {
    store: given ?? shared ?? new MemorySessionStore(config.sessions),
    totals: shared?.totals ?? new SessionAccounting(config.sessions.maxEntries),
    ...(shared ? { calibration: shared.calibration } : {}),
  }
}

const storeErrorLogIntervalMs = 30_000

/** A Redis store when configured; its failures are counted and logged at most once per interval. */
function createSharedStore(
  config: Readonly<Config>,
  metrics: ProxyMetrics,
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
    localCopies: { maxEntries: config.sessions.maxEntries, maxTotalBytes: config.sessions.maxTotalBytes },
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
