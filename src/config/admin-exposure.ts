import { isIP } from 'node:net'
import type { Config } from './schema.ts'

/**
 * With client authentication on, /metrics and /ctxgate/sessions list every tenant's sessions and
 * usage: they must need the admin token, or live on their own listener that only this host reaches.
 */
export function adminExposureProblems(config: Readonly<Config>): string[] {
  if (config.auth.tokens.length === 0 || config.metrics.token !== null) return []
  if (config.metrics.port !== null && isLoopback(config.metrics.host)) return []
  return [
    'auth.tokens (env CTXGATE_AUTH_TOKENS) is set, so /metrics and /ctxgate/sessions would show every client’s ' +
      'sessions to anyone: set metrics.token (env CTXGATE_ADMIN_TOKEN), or move them to their own port ' +
      '(metrics.port, env CTXGATE_METRICS_PORT) on a loopback address (metrics.host, env CTXGATE_METRICS_HOST, ' +
      'default 127.0.0.1)',
  ]
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1' || host === '[::1]'
}
