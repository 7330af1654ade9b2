import { Counter, Gauge, type Registry } from 'prom-client'
import type { HistoryBudget } from './history-budget.ts'
import type { PreparationGate } from './preparation-gate.ts'

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

/** The large client messages being received or prepared: their places (held or waiting), the allowance, and how often a socket stopped reading to wait for one. */
export function registerPreparationMetrics(registry: Registry, gate: PreparationGate): void {
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_preparing_bytes',
      help: "Bytes of the places held by large WebSocket client messages, from their first frame header to their preparation's end (being received, or parsed and rewritten); a message waiting for its place is not read and not counted.",
      registers: [],
      collect() {
        this.set(gate.held)
      },
    }),
  )
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_preparing_bytes_budget',
      help: 'The configured allowance for ctxgate_websocket_preparing_bytes (websocket.maxPreparingBytes).',
      registers: [],
      collect() {
        this.set(gate.max)
      },
    }),
  )
  registry.registerMetric(
    new Counter({
      name: 'ctxgate_websocket_reads_paused_total',
      help: 'Times a Responses socket stopped reading a large client message until it had its place in websocket.maxPreparingBytes.',
      registers: [],
      collect() {
        this.reset()
        this.inc(gate.pauses)
      },
    }),
  )
}
