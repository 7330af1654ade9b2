import type { Config } from '../config/schema.ts'
import { preparationCopies } from './preparation-gate.ts'

/**
 * The memory ctxgate may hold for its WebSockets, all sockets together, as the sum of what its
 * settings enforce (docs/memory-budgets.md): the kept histories, the working sets of the messages
 * being received and prepared, and the rewrite workers' heaps that prepare them.
 */
export interface SocketMemoryBudget {
  /** `websocket.maxHistoryBytes`: a socket whose history would pass it is forwarded as sent. */
  readonly history: number
  /**
   * `websocket.maxPreparingBytes`, charged at `preparationCopies` per message byte; one message
   * larger than that runs alone, so the ceiling is the larger of the allowance and the working set
   * of a message at `server.bodyLimitBytes` (ws refuses a larger one).
   */
  readonly preparing: number
  /** `rewriteWorkers.threads` × `rewriteWorkers.maxHeapBytes`: V8 ends a worker past its heap; its body goes on as sent. */
  readonly workers: number
  readonly total: number
}

export function socketMemoryBudget(config: Readonly<Config>): SocketMemoryBudget {
  const history = config.websocket.maxHistoryBytes
  const preparing = Math.max(config.websocket.maxPreparingBytes, preparationCopies * config.server.bodyLimitBytes)
  const workers = config.rewriteWorkers.threads * config.rewriteWorkers.maxHeapBytes
  return { history, preparing, workers, total: history + preparing + workers }
}
