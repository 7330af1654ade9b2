/**
 * What a collector that is down costs in memory: ctxgate (in this process) exporting to a closed
 * port, against the same with export off, heap after a full GC every `--requests` streamed
 * requests: the requests' thread's heap plus the export worker's, where the span queue
 * (OTEL_BSP_MAX_QUEUE_SIZE) lives. Export to a collector that is up shows the worker's own heap;
 * down adds the queue, which should show as a step that stops growing.
 * Usage: node --expose-gc --import tsx bench/otel-queue-memory.ts [--rounds 6] [--requests 1500]
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { startTelemetry, type WorkerTelemetry } from '../src/telemetry/start-telemetry.ts'
import { loadTelemetrySettings } from '../src/telemetry/telemetry-settings.ts'
import { startStack } from '../test/helpers/stack.ts'
import { smallRequest } from './latency-bodies.ts'

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '6' }, requests: { type: 'string', default: '1500' } },
})
const rounds = Number(values.rounds)
const perRound = Number(values.requests)
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc --import tsx')

// The latency benches' 2 KB request, streamed.
const body = JSON.stringify({ ...smallRequest, stream: true })
const headers = {
  'content-type': 'application/json',
  'x-api-key': 'sk-ant-bench-0001',
  'anthropic-version': '2023-06-01',
}
const streams = 16

/** A collector that takes every export. */
const receiver = createServer((incoming, response) => {
  incoming.resume()
  incoming.on('end', () => response.writeHead(200).end())
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

/** `endpoint` undefined: export off. */
async function heapSeries(endpoint: string | undefined): Promise<string[]> {
  const exporting = endpoint !== undefined
  const settings = loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint ?? '' })
  let telemetry: WorkerTelemetry | undefined
  const stack = await startStack({
    logLevel: 'silent',
    ...(exporting && settings
      ? { telemetry: (config, logger) => (telemetry = startTelemetry(settings, config, logger)) }
      : {}),
  })
  const agent = new Agent({ connections: streams })
  const series: string[] = []
  try {
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: streams }, async () => {
          for (let sent = 0; sent < perRound / streams; sent++) {
            const answer = await request(`${stack.proxyUrl}/v1/messages`, {
              method: 'POST',
              headers,
              body,
              dispatcher: agent,
            })
            await answer.body.text()
          }
        }),
      )
      gc?.()
      const workerHeap = (await telemetry?.workerHeapBytes()) ?? 0
      series.push(((process.memoryUsage().heapUsed + workerHeap) / 1048576).toFixed(1))
    }
  } finally {
    await agent.close()
    await stack.close()
  }
  return series
}

console.log(`heap used (MB, requests' thread + export worker) after each ${perRound} streamed requests, full GC first:`)
console.log(
  '| ctxgate | ' + Array.from({ length: rounds }, (_, round) => `${(round + 1) * perRound}`).join(' | ') + ' |',
)
console.log('| --- | ' + Array.from({ length: rounds }, () => '---:').join(' | ') + ' |')
// Port 9 (discard) is closed on loopback: every export is refused.
console.log(`| collector down | ${(await heapSeries('http://127.0.0.1:9')).join(' | ')} |`)
console.log(`| collector up | ${(await heapSeries(receiverUrl)).join(' | ')} |`)
console.log(`| export off | ${(await heapSeries(undefined)).join(' | ')} |`)
receiver.close()
