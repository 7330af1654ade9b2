import { Gauge, type Registry } from 'prom-client'
import type { CircuitState } from './circuit-breaker.ts'

/** `ctxgate_store_circuit_open`: 1 while ctxgate skips the shared store (open, or waiting on its probe), else 0. */
export function registerStoreCircuitGauge(registry: Registry, state: () => CircuitState): Gauge {
  return new Gauge({
    name: 'ctxgate_store_circuit_open',
    help: 'Whether ctxgate is skipping the shared session store after repeated failures or timeouts (1) or using it (0).',
    registers: [registry],
    collect() {
      this.set(state() === 'closed' ? 0 : 1)
    },
  })
}
