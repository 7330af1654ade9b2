/** Runs every benchmark with short defaults; each prints its own table. */
import { spawnSync } from 'node:child_process'

// Short defaults: the whole set runs in about five minutes on 2 cores.
const runs: [string, ...string[]][] = [
  ['bench/sse-tap.ts'],
  ['bench/rewrite.ts'],
  ['bench/cpu-per-request.ts', '2000', '5'],
  ['bench/event-loop-stall.ts', '8'],
  ['bench/latency.ts', '100', '2'],
  ['bench/memory.ts', '1000', '20000'],
  ['bench/preamble-hold.ts', '200', '0'],
  ['bench/economy-cpu.ts', '100', '3'],
]
for (const [script, ...args] of runs) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
