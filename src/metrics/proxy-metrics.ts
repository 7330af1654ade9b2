import { Counter, Histogram, type Registry } from 'prom-client'

/** The proxy's own counters, registered on an injected registry (never prom-client's global one). */
export function createProxyMetrics(registry: Registry) {
  const registers = [registry]
  return {
    requests: new Counter({
      name: 'ctxgate_requests_total',
      help: 'Requests handled, by route kind, upstream and status class.',
      labelNames: ['route', 'provider', 'status_class'] as const,
      registers,
    }),
    upstreamAttempts: new Counter({
      name: 'ctxgate_upstream_attempts_total',
      help: 'Upstream attempts made, retries included.',
      labelNames: ['provider'] as const,
      registers,
    }),
    upstreamRetries: new Counter({
      name: 'ctxgate_upstream_retries_total',
      help: 'Upstream retries before the first byte, by reason.',
      labelNames: ['provider', 'reason'] as const,
      registers,
    }),
    failOpen: new Counter({
      name: 'ctxgate_fail_open_total',
      help: 'Requests forwarded unchanged because ctxgate failed to read or prepare them.',
      labelNames: ['provider', 'stage'] as const,
      registers,
    }),
    streamAborts: new Counter({
      name: 'ctxgate_stream_aborts_total',
      help: 'Responses that did not complete, by who ended them.',
      labelNames: ['provider', 'phase'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'ctxgate_request_duration_seconds',
      help: 'Time from request received to response finished.',
      labelNames: ['route', 'provider'] as const,
      buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    }),
  }
}

export type ProxyMetrics = ReturnType<typeof createProxyMetrics>

export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other'
}
