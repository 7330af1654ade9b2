/** Runs every benchmark with short defaults; each prints its own table. */
import { spawnSync } from 'node:child_process'

for (const script of ['bench/sse-tap.ts', 'bench/rewrite.ts', 'bench/proxy-latency.ts']) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
