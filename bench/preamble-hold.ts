/**
 * What holding a Responses stream's preamble costs: time to the first byte and to the first
 * content event at the client, with the hold (a rewritable request) beside today's plain relay
 * (`x-ctxgate-mode: passthrough`, no hold), through ctxgate to a local upstream that sends
 * `response.created` + `response.in_progress`, then after GAP ms the first delta, then the end.
 * Usage: tsx bench/preamble-hold.ts [requests] [gapMs]
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { createLogger } from '../src/log/logger.ts'

const requests = Number(process.argv[2] ?? 300)
const gapMs = Number(process.argv[3] ?? 0)
const frame = (event: Record<string, unknown>) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`
const preamble =
  frame({
    type: 'response.created',
    sequence_number: 0,
    response: { id: 'resp_1', status: 'in_progress', output: [] },
  }) +
  frame({
    type: 'response.in_progress',
    sequence_number: 1,
    response: { id: 'resp_1', status: 'in_progress', output: [] },
  })
const delta = frame({ type: 'response.output_text.delta', sequence_number: 2, delta: 'hello' })
const completed = frame({
  type: 'response.completed',
  sequence_number: 3,
  response: { id: 'resp_1', status: 'completed', output: [] },
})

const upstream = createServer((incoming, response) => {
  incoming.resume()
  incoming.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.write(preamble)
    setTimeout(() => {
      response.write(delta)
      response.end(completed)
    }, gapMs)
  })
})
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
const config = loadConfig({
  env: {},
  overrides: { server: { port: 0 }, upstreams: { anthropic: { url: upstreamUrl }, openai: { url: upstreamUrl } } },
})
const app = await buildApp({ config, logger: createLogger('silent'), registry: new Registry() })
await app.server.listen({ host: '127.0.0.1', port: 0 })
const proxyUrl = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}/v1/responses`
const body = JSON.stringify({
  model: 'gpt-5',
  stream: true,
  prompt_cache_key: 'bench',
  input: [{ role: 'user', content: 'Say hello.' }],
})

/** One request: ms to the first body byte and to the first byte of the delta event. */
async function once(mode: 'hold' | 'plain'): Promise<{ firstByte: number; firstContent: number }> {
  const started = performance.now()
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (mode === 'plain') headers['x-ctxgate-mode'] = 'passthrough'
  const answer = await request(proxyUrl, { method: 'POST', headers, body })
  let firstByte = 0
  let firstContent = 0
  let text = ''
  for await (const chunk of answer.body) {
    const now = performance.now() - started
    if (firstByte === 0) firstByte = now
    text += String(chunk)
    if (firstContent === 0 && text.includes('output_text.delta')) firstContent = now
  }
  return { firstByte, firstContent }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

const results = {
  hold: { firstByte: [] as number[], firstContent: [] as number[] },
  plain: { firstByte: [] as number[], firstContent: [] as number[] },
}
for (let index = 0; index < 30; index++) await Promise.all([once('hold'), once('plain')])
// Interleaved, so drift on a shared machine hits both alike.
for (let index = 0; index < requests; index++)
  for (const mode of ['hold', 'plain'] as const) {
    const run = await once(mode)
    results[mode].firstByte.push(run.firstByte)
    results[mode].firstContent.push(run.firstContent)
  }
console.log(
  `\nResponses stream, ${requests} requests each, ${gapMs} ms between the preamble and the first delta (median ms)`,
)
console.log('| relay | first byte | first content event |')
console.log('|---|---:|---:|')
for (const mode of ['plain', 'hold'] as const)
  console.log(
    `| ${mode === 'hold' ? 'preamble held (rewritable request)' : 'plain relay (passthrough, as before)'} | ${median(results[mode].firstByte).toFixed(2)} | ${median(results[mode].firstContent).toFixed(2)} |`,
  )
await app.server.close()
upstream.close()
