import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { budgetWarnings } from '../config/budget-warnings.ts'
import { loadConfig } from '../config/load-config.ts'
import { createLogger } from '../log/logger.ts'
import { registerProcessMetrics } from '../metrics/process-metrics.ts'
import { loadTelemetrySettings } from '../telemetry/telemetry-settings.ts'
import { listenOrExplain } from './listen.ts'
import { startedByPackageScript, stopWhenParentExits } from './parent-watch.ts'

/** Starts the proxy (and a separate metrics listener if configured); drains on SIGTERM/SIGINT. */
export async function serve(flags: Record<string, string | undefined>, env: NodeJS.ProcessEnv): Promise<void> {
  const originalParent = process.ppid
  const config = loadConfig({ env, flags })
  const telemetrySettings = loadTelemetrySettings(env)
  const logger = createLogger(config.log.level)
  for (const warning of budgetWarnings(config)) logger.warn({ code: 'CTXGATE_BUDGET_ABOVE_WINDOW' }, warning)
  // The SDK loads only when export is on: a start without it (and --help) does not pay for its modules.
  const telemetry = telemetrySettings
    ? (await import('../telemetry/start-telemetry.ts')).startTelemetry(telemetrySettings, config, logger)
    : undefined
  const app = await buildApp({ config, logger, ...(telemetry ? { telemetry } : {}) })
  registerProcessMetrics(app.registry)
  let metricsServer: FastifyInstance | undefined
  try {
    await listenOrExplain(app.server, { host: config.server.host, port: config.server.port }, 'server.port')
    if (config.metrics.port !== null) {
      metricsServer = Fastify()
      app.registerAdmin(metricsServer)
      await listenOrExplain(metricsServer, { host: config.metrics.host, port: config.metrics.port }, 'metrics.port')
    }
  } catch (error) {
    // Whatever did start is closed, so the process can exit without a half-open listener.
    await Promise.allSettled([app.server.close(), metricsServer?.close()])
    throw error
  }

  logger.info(
    {
      address: `http://${config.server.host}:${config.server.port}`,
      ...Object.fromEntries(Object.entries(config.upstreams).map(([name, upstream]) => [name, upstream.url])),
      metrics: config.metrics.port === null ? '/metrics' : `:${config.metrics.port}/metrics`,
      opentelemetry: telemetrySettings
        ? { traces: telemetrySettings.traces?.url ?? 'off', metrics: telemetrySettings.metrics?.url ?? 'off' }
        : 'off',
    },
    'ctxgate listening',
  )

  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    logger.info(
      { signal, graceMs: config.server.shutdownGraceMs },
      'shutting down: no new connections, in-flight requests may finish',
    )
    const deadline = setTimeout(() => {
      // Streams get an error event and sockets a close frame before the process goes, not a dropped connection.
      void app.endInFlight().then(
        (cut) => {
          logger.warn(cut, 'grace period over; open streams ended with an error event, sockets closed with 1001')
          process.exit(0)
        },
        () => process.exit(0),
      )
    }, config.server.shutdownGraceMs)
    deadline.unref()
    Promise.all([app.server.close(), metricsServer?.close()])
      .then(() => process.exit(0))
      .catch(() => process.exit(1))
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  if (startedByPackageScript(env)) stopWhenParentExits(() => stop('parent exited'), { originalParent })
}
