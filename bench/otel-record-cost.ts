/**
 * Where OpenTelemetry export's CPU goes per model call, phase by phase, and what of it is left on
 * the requests' thread. Real records (streamed Anthropic requests through an in-process ctxgate,
 * rewrite on, with a traceparent) are replayed `--calls` times through:
 *   - each phase of the SDK pipeline run on the calling thread (the design before the export
 *     worker): the record's copy, the span attributes and sampling, building and queueing the two
 *     spans, their protobuf encoding and HTTP export to a local receiver, the four histogram records;
 *   - the export worker (start-telemetry.ts), where the calling thread only copies the record.
 * "main thread" is the CPU of the thread requests run on (recordModelCall and any export work it
 * queued there); "process CPU" adds the worker's thread. Same run, same records, so rows compare.
 * Usage: tsx bench/otel-record-cost.ts [--calls 50000]
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { resourceFromAttributes } from '@opentelemetry/resources'
import pino from 'pino'
import { request } from 'undici'
import type { RequestRecord } from '../src/request/request-record.ts'
import { startExportPipeline } from '../src/telemetry/export-pipeline.ts'
import { exportedCallOf } from '../src/telemetry/exported-call.ts'
import { FinishedSpans } from '../src/telemetry/finished-spans.ts'
import { ModelCallExport, serverAddressOf } from '../src/telemetry/model-call-export.ts'
import { samplerFor } from '../src/telemetry/sampler.ts'
import { startTelemetry } from '../src/telemetry/start-telemetry.ts'
import { loadTelemetrySettings, type TelemetrySettings } from '../src/telemetry/telemetry-settings.ts'
import { startStack } from '../test/helpers/stack.ts'

const { values } = parseArgs({ options: { calls: { type: 'string', default: '50000' } } })
const calls = Number(values.calls)
const modelLabel = 'claude-sonnet-4-5'

/** A few real records, as ctxgate's forward path hands them to telemetry. */
async function capturedRecords() {
  const records: RequestRecord[] = []
  const stack = await startStack({
    logLevel: 'silent',
    telemetry: () => ({ recordModelCall: (record) => void records.push(record), shutdown: async () => {} }),
  })
  const body = JSON.stringify({
    model: modelLabel,
    max_tokens: 64,
    stream: true,
    messages: [{ role: 'user', content: 'x'.repeat(2_000) }],
  })
  for (let sent = 0; sent < 4; sent++) {
    const answer = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'sk-ant-bench-0001',
        'anthropic-version': '2023-06-01',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
      body,
    })
    await answer.body.text()
  }
  await stack.close()
  return { record: records.at(-1) as RequestRecord, config: stack.config }
}

const { record, config } = await capturedRecords()
const servers = Object.fromEntries(Object.entries(config.upstreams).map(([name, u]) => [name, serverAddressOf(u.url)]))
const receiver = createServer((incoming, response) => {
  incoming.resume()
  incoming.on('end', () => response.writeHead(200).end())
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
const settingsWith = (env: Record<string, string>): TelemetrySettings => {
  const settings = loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, ...env })
  if (!settings) throw new Error('export should be on')
  return settings
}
const silent = pino({ level: 'silent' })
const processCpuUs = (): number => {
  const used = process.cpuUsage()
  return used.user + used.system
}

interface Arm {
  readonly name: string
  readonly record: () => void
  /** Waits until what was recorded has been taken up (the worker at its low priority can lag a loaded machine). */
  readonly settle?: () => Promise<void>
  readonly finish: () => Promise<void>
}

/** CPU time (ms) of this process's main thread, from /proc (Linux; 10 ms ticks, hence the many calls). */
function mainThreadCpuMs(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** CPU µs per call of the main thread and of the whole process (the worker's thread included), until all is sent. */
async function measure(arm: Arm): Promise<{ main: number; process: number }> {
  for (let warm = 0; warm < 2_000; warm++) arm.record()
  await new Promise((resolve) => setTimeout(resolve, 300))
  const mainBefore = mainThreadCpuMs()
  const processBefore = processCpuUs()
  for (let done = 0; done < calls; done += 100) {
    for (let one = 0; one < 100; one++) arm.record()
    // 100 calls every 20 ms (5,000 a second, several times what the 64-stream bench reaches): timers, sockets and the worker run between.
    await new Promise((resolve) => setTimeout(resolve, 20))
    await arm.settle?.()
  }
  await arm.finish()
  return { main: ((mainThreadCpuMs() - mainBefore) * 1000) / calls, process: (processCpuUs() - processBefore) / calls }
}

const onThread = (name: string, env: Record<string, string>): Arm => {
  const pipeline = startExportPipeline(settingsWith(env), servers, silent)
  return { name, record: () => pipeline.record(exportedCallOf(record, modelLabel)), finish: () => pipeline.shutdown() }
}
const spansNotEncoded = (): Arm => {
  const settings = settingsWith({ OTEL_METRICS_EXPORTER: 'none' })
  const spans = new FinishedSpans(new NoopSpanProcessor(), samplerFor(settings.sampler), resourceFromAttributes({}))
  const exported = new ModelCallExport({ settings, servers, spans, meter: undefined, logger: silent })
  return {
    name: '+ the span built and queued (not encoded)',
    record: () => exported.record(exportedCallOf(record, modelLabel)),
    finish: async () => {},
  }
}
const worker = (): Arm => {
  const telemetry = startTelemetry(settingsWith({}), config, silent)
  return {
    name: 'export worker: traces + metrics',
    record: () => telemetry.recordModelCall(record, modelLabel),
    settle: async () => {
      while (telemetry.pendingCalls > 100) await new Promise((resolve) => setTimeout(resolve, 5))
    },
    finish: async () => {
      await telemetry.shutdown()
      if (telemetry.droppedCalls > 0) console.log(`(the worker fell behind: ${telemetry.droppedCalls} calls dropped)`)
    },
  }
}
const idle: Arm = { name: 'nothing (the loop itself)', record: () => {}, finish: async () => {} }
const copyOnly: Arm = {
  name: "the record's copy for export (exportedCallOf)",
  record: () => void exportedCallOf(record, modelLabel),
  finish: async () => {},
}

console.log(
  `OpenTelemetry export, CPU per model call (${calls} calls of one real streamed record, ${record.upstreamAttempts?.length ?? 0} upstream attempt)`,
)
console.log(`node ${process.version}\n`)
console.log('| what runs | main thread CPU µs/call | process CPU µs/call |')
console.log('| --- | ---: | ---: |')
const arms: (() => Arm)[] = [
  () => idle,
  () => copyOnly,
  () =>
    onThread('on the calling thread: + attributes, sampled out (OTEL_TRACES_SAMPLER=always_off)', {
      OTEL_TRACES_SAMPLER: 'always_off',
      OTEL_METRICS_EXPORTER: 'none',
    }),
  spansNotEncoded,
  () =>
    onThread('on the calling thread: + protobuf encoding and export (traces only)', { OTEL_METRICS_EXPORTER: 'none' }),
  () => onThread('on the calling thread: histograms only (metrics only)', { OTEL_TRACES_EXPORTER: 'none' }),
  () => onThread('on the calling thread: traces + metrics (before the worker)', {}),
  worker,
]
let loop = 0
for (const make of arms) {
  const arm = make()
  const { main, process: cpu } = await measure(arm)
  if (arm === idle) loop = main
  // The loop's own timers are taken off the main thread's figure (the first row shows them).
  const mainFigure = arm === idle ? main : Math.max(0, main - loop)
  console.log(`| ${arm.name} | ${mainFigure.toFixed(1)} | ${cpu.toFixed(1)} |`)
}
receiver.close()
