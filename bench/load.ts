/**
 * Load steps for the throughput table: wrk (C, one thread) when the machine has it, so the load
 * generator takes little of the CPU the proxies need; autocannon otherwise.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import type { Target } from './peers.ts'

export interface LoadResult {
  readonly rate: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
}

export const loadTool: 'wrk' | 'autocannon' = spawnSync('wrk', ['--version']).error ? 'autocannon' : 'wrk'

const baseHeaders = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'bench' }

export async function runLoad(target: Target, connections: number, seconds: number, body: string): Promise<LoadResult> {
  const headers = { ...baseHeaders, ...target.headers }
  if (loadTool === 'autocannon') {
    const result = await autocannon({
      url: `${target.url}/v1/messages`,
      method: 'POST',
      connections,
      duration: seconds,
      headers,
      body,
    })
    return {
      rate: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      errors: result.errors + result.non2xx,
    }
  }
  const script = join(tmpdir(), `ctxgate-bench-wrk-${process.pid}.lua`)
  const lua = [
    `wrk.method = "POST"`,
    ...Object.entries(headers).map(
      ([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`,
    ),
    `wrk.body = ${JSON.stringify(body)}`,
  ].join('\n')
  writeFileSync(script, lua)
  const output = execFileSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `${target.url}/v1/messages`],
    { encoding: 'utf8' },
  )
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0)
  return {
    rate: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0),
    p50Ms: wrkDuration(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
    p99Ms: wrkDuration(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
    errors: non2xx + (socketErrors ? socketErrors.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0),
  }
}

/** wrk prints 812.00us, 1.23ms, 2.00s. */
function wrkDuration(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? '')
  if (!match) return Number.NaN
  const value = Number(match[1])
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value
}
