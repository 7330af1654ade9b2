import { Counter, Gauge, type Registry } from 'prom-client'
import type { RewriteWorkers } from './pool.ts'

/** The rewrite workers in Prometheus: bodies queued against their budget, workers alive, refusals and failures. */
export function registerRewriteWorkerMetrics(registry: Registry, workers: RewriteWorkers): void {
  const gauge = (name: string, help: string, read: () => number): Gauge =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read())
      },
    })
  const counter = (name: string, help: string, read: () => number): Counter =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(read())
      },
    })
  gauge(
    'ctxgate_rewrite_workers_queued_bytes',
    'Bytes of large bodies waiting for a rewrite worker or in one.',
    () => workers.queuedBytes,
  )
  gauge(
    'ctxgate_rewrite_workers_queued_bytes_budget',
    'The configured ceiling on ctxgate_rewrite_workers_queued_bytes (rewriteWorkers.maxQueuedBytes).',
    () => workers.budget,
  )
  gauge(
    'ctxgate_rewrite_workers_threads',
    'Rewrite worker threads alive (started on demand, ended when idle).',
    () => workers.threads,
  )
  counter(
    'ctxgate_rewrite_workers_refused_total',
    'Large bodies answered 503 CTXGATE_OVERLOADED because rewriteWorkers.maxQueuedBytes was reached.',
    () => workers.refused,
  )
  counter(
    'ctxgate_rewrite_workers_failed_total',
    'Rewrites a worker did not finish (crash, timeout, error): the body went on as the client sent it.',
    () => workers.failed,
  )
}
