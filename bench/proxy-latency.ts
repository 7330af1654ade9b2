/**
 * Added latency of ctxgate over calling the fake upstream directly, measured in interleaved rounds
 * in one process so both sides see the same machine state. Usage: tsx bench/proxy-latency.ts [requests]
 */
import { Agent, request } from 'undici'
import { Registry } from 'prom-client'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { createLogger } from '../src/log/logger.ts'
import { startMockServer } from '../src/mock/server.ts'

const requests = Number(process.argv[2] ?? 2_000)
const mock = await startMockServer()
const config = loadConfig({ overrides: { server: { port: 0 }, upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } }, log: { level: 'silent' } } })
const app = await buildApp({ config, logger: createLogger('silent'), registry: new Registry() })
await app.server.listen({ host: '127.0.0.1', port: 0 })
const proxyUrl = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`
const client = new Agent({ keepAliveTimeout: 10_000 })

const small = JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 64, messages: [{ role: 'user', content: 'x'.repeat(2_000) }] })
const smallStream = JSON.stringify({ ...JSON.parse(small), stream: true })

async function timeOne(base: string, body: string): Promise<number> {
  const started = performance.now()
  const answer = await request(`${base}/v1/messages`, { method: 'POST', dispatcher: client, headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body })
  await answer.body.arrayBuffer()
  return performance.now() - started
}

function percentile(values: number[], p: number): number {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

const ms = (value: number): string => value.toFixed(3)
const rows: string[][] = []
for (const [label, body] of [['2 KB JSON', small], ['2 KB stream', smallStream]] as const) {
  for (let warm = 0; warm < 200; warm++) {
    await timeOne(mock.url, body)
    await timeOne(proxyUrl, body)
  }
  const direct: number[] = []
  const proxied: number[] = []
  for (let index = 0; index < requests; index++) {
    direct.push(await timeOne(mock.url, body))
    proxied.push(await timeOne(proxyUrl, body))
  }
  const added = proxied.map((value, index) => value - (direct[index] as number))
  rows.push([label, ms(percentile(direct, 50)), ms(percentile(proxied, 50)), ms(percentile(added, 50)), ms(percentile(direct, 99)), ms(percentile(proxied, 99)), ms(percentile(added, 99))])
}

console.log(`\nAdded latency, sequential, ${requests} interleaved requests per row (ms)`)
console.log(['request', 'direct p50', 'ctxgate p50', 'added p50', 'direct p99', 'ctxgate p99', 'added p99'].join(' | '))
for (const row of rows) console.log(row.join(' | '))
await app.server.close()
await mock.close()
await client.close()
