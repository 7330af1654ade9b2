import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { socketMemoryBudget } from '../../src/websocket/memory-budget.ts'
import { preparationCopies } from '../../src/websocket/preparation-gate.ts'

const mib = 1024 * 1024

describe("the WebSockets' memory budget", () => {
  it('prevents an unbounded part left out of the sum: histories, preparation working sets and the workers’ heaps, each from its setting', () => {
    const budget = socketMemoryBudget(loadConfig({}))
    expect(budget).toEqual({
      history: 256 * mib,
      // One message at server.bodyLimitBytes (32 MiB) runs alone, past the 96 MiB allowance: its working set is the ceiling.
      preparing: preparationCopies * 32 * mib,
      workers: 2 * 192 * mib,
      total: 256 * mib + preparationCopies * 32 * mib + 2 * 192 * mib,
    })
  })

  it('follows the settings: a larger allowance, smaller bodies, and no workers', () => {
    const config = loadConfig({
      overrides: {
        server: { bodyLimitBytes: 4 * mib },
        websocket: { maxHistoryBytes: 64 * mib, maxPreparingBytes: 48 * mib },
        rewriteWorkers: { threads: 0 },
      },
    })
    expect(socketMemoryBudget(config)).toEqual({ history: 64 * mib, preparing: 48 * mib, workers: 0, total: 112 * mib })
  })
})
