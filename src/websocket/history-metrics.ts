import { Counter, Gauge, type Registry } from 'prom-client'
import type { HistoryBudget } from './history-budget.ts'
import type { SocketMemoryBudget } from './memory-budget.ts'
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

/**
 * The large client messages being received or prepared: their places (held or waiting), the
 * allowance, how often a socket stopped reading to wait for one; and the sockets' whole memory
 * budget, of which the preparations are one part.
 */
export function registerPreparationMetrics(
  registry: Registry,
  gate: PreparationGate,
  budget: SocketMemoryBudget,
): void {
  registerSocketMemoryBudget(registry, budget)
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_preparing_bytes',
      help: "The working sets of the places held by large WebSocket client messages (6 times their bytes), from their first frame header to their preparation's end (being received, or parsed and rewritten); a message waiting for its place is not read and not counted.",
      registers: [],
      collect() {
        this.set(gate.held)
      },
    }),
  )
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_preparing_bytes_budget',
      help: 'The configured allowance for ctxgate_websocket_preparing_bytes (websocket.maxPreparingBytes); a message larger than it runs alone.',
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

/** The sockets' whole memory budget (memory-budget.ts): the sum, and each part that makes it up. */
function registerSocketMemoryBudget(registry: Registry, budget: SocketMemoryBudget): void {
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_memory_budget_bytes',
      help: 'The memory all WebSockets may hold together, as enforced by the settings: websocket.maxHistoryBytes + the preparation working sets (websocket.maxPreparingBytes, or one message at server.bodyLimitBytes alone) + rewriteWorkers.threads x rewriteWorkers.maxHeapBytes.',
      registers: [],
      collect() {
        this.set(budget.total)
      },
    }),
  )
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_websocket_memory_budget_part_bytes',
      help: "One part of ctxgate_websocket_memory_budget_bytes: history (kept conversations), preparing (messages received and prepared, at their working set), workers (the rewrite workers' heaps).",
      labelNames: ['part'],
      registers: [],
      collect() {
        this.set({ part: 'history' }, budget.history)
        this.set({ part: 'preparing' }, budget.preparing)
        this.set({ part: 'workers' }, budget.workers)
      },
    }),
  )
}
