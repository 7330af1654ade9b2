import { readFileSync } from 'node:fs'
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client'

/**
 * What a running ctxgate process adds to its registry: prom-client's process and Node.js metrics
 * (CPU, memory, event-loop lag, GC, handles) and `ctxgate_build_info`. Only the served process
 * registers them; apps built in tests and replays stay without their timers.
 */
export function registerProcessMetrics(registry: Registry, version: string = packageVersion()): void {
  collectDefaultMetrics({ register: registry })
  new Gauge({
    name: 'ctxgate_build_info',
    help: 'Always 1; the labels say which ctxgate and which Node.js are running.',
    labelNames: ['version', 'node_version'] as const,
    registers: [registry],
  }).set({ version, node_version: process.versions.node }, 1)
}

/** The version in package.json (two folders up from both src/metrics and dist/metrics). */
export function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8')
    const version = (JSON.parse(text) as { version?: unknown }).version
    return typeof version === 'string' ? version : 'unknown'
  } catch {
    return 'unknown'
  }
}
