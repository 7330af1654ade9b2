import { Counter, Gauge, type Registry } from 'prom-client'
import type { HistoryBudget } from './history-budget.ts'

/** The WebSocket histories' memory in Prometheus: held, the ceiling, and histories given up at it. */
export function registerHistoryMetrics(registry: Registry, budget: HistoryBudget): void {
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_history_bytes',
      help: 'Memory held by the Responses conversations kept for open WebSockets (item bytes plus an estimated overhead per item).',
      registers: [],
      collect() {
        this.set(budget.used)
      },
    }),
  )
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_history_bytes_budget',
      help: 'The configured ceiling on ctxgate_websocket_history_bytes (websocket.maxHistoryBytes).',
      registers: [],
      collect() {
        this.set(budget.max)
      },
    }),
  )
  registry.registerMetric(
    new Counter({
      name: 'ctxgate_websocket_history_refused_total',
      help: 'Socket histories given up because all sockets together reached websocket.maxHistoryBytes (the socket is then forwarded as sent).',
      registers: [],
      collect() {
        this.reset()
        this.inc(budget.refusals)
      },
    }),
  )
}
