/**
 * WebSocket history memory: N Responses sockets each send one large input, then continue it with
 * previous_response_id, and stay open. Prints ctxgate's RSS (idle, peak, with the sockets open) and
 * what it says it holds, beside its configured budgets (websocket.maxHistoryBytes +
 * websocket.maxPreparingBytes), for the defaults and smaller ones, in one run.
 * Usage: tsx bench/websocket-memory.ts [sockets=16] [inputMb=10]
 */
import { readFileSync } from 'node:fs'
import { request } from 'undici'
import { WebSocket } from 'ws'
import { startCtxgate, startMockProcess } from './peers.ts'

const socketCount = Number(process.argv[2] ?? 16)
const inputMb = Number(process.argv[3] ?? 10)

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

/** About `inputMb` MB of tool outputs, 20 KB each, as an agent's long run would carry. */
function largeInput(seed: number): unknown[] {
  const items: unknown[] = [{ type: 'message', role: 'user', content: `task ${seed}` }]
  const perItem = 20_000
  for (let index = 0; index * perItem < inputMb * 1_000_000; index++) {
    const callId = `call_${seed}_${index}`
    items.push({ type: 'function_call', call_id: callId, name: 'read_file', arguments: `{"path":"f${index}.ts"}` })
    items.push({ type: 'function_call_output', call_id: callId, output: `${seed}:${index} `.padEnd(perItem, 'x') })
  }
  return items
}

function turn(socket: WebSocket, message: unknown): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer): void => {
      const event = JSON.parse(String(data)) as { type?: string; response?: { id?: string } }
      if (!['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(event.type ?? '')) return
      socket.off('message', onMessage)
      resolve(event.response?.id)
    }
    socket.on('message', onMessage)
    socket.once('close', (code) => reject(new Error(`closed ${code}`)))
    socket.send(JSON.stringify(message))
  })
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await request(`${url}/metrics`)).body.text()
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `))
  return Number(line?.split(' ')[1] ?? Number.NaN)
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0)

async function measure(
  budgets: { history: number; preparing: number } | undefined,
  extraYaml = '',
  label = '',
): Promise<string> {
  const mock = await startMockProcess()
  const configYaml =
    (budgets === undefined
      ? ''
      : `websocket:\n  maxHistoryBytes: ${budgets.history}\n  maxPreparingBytes: ${budgets.preparing}\n`) + extraYaml
  const ctxgate = await startCtxgate(mock.url, true, { configYaml })
  try {
    const budget = await metric(ctxgate.url, 'ctxgate_websocket_history_bytes_budget')
    const preparing = await metric(ctxgate.url, 'ctxgate_websocket_preparing_bytes_budget')
    let preparingPeak = 0
    const preparingSampler = setInterval(
      () =>
        void metric(ctxgate.url, 'ctxgate_websocket_preparing_bytes').then(
          (held) => (preparingPeak = Math.max(preparingPeak, held)),
          () => undefined,
        ),
      100,
    )
    const idle = rssMb(ctxgate.pid)
    let peak = idle
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(ctxgate.pid))), 50)
    const sockets = await Promise.all(
      Array.from({ length: socketCount }, async (_, index) => {
        const socket = new WebSocket(`${ctxgate.url.replace('http', 'ws')}/v1/responses`, {
          headers: { authorization: 'Bearer sk-bench' },
          maxPayload: 64 * 1024 * 1024,
        })
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
        const id = await turn(socket, {
          type: 'response.create',
          model: 'gpt-4.1',
          store: false,
          input: largeInput(index),
        })
        const more = [{ type: 'message', role: 'user', content: 'and then?' }]
        await turn(socket, {
          type: 'response.create',
          model: 'gpt-4.1',
          store: false,
          previous_response_id: id,
          input: more,
        })
        return socket
      }),
    )
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    clearInterval(sampler)
    clearInterval(preparingSampler)
    const open = rssMb(ctxgate.pid)
    const pauses = await metric(ctxgate.url, 'ctxgate_websocket_reads_paused_total')
    const held = await metric(ctxgate.url, 'ctxgate_websocket_history_bytes')
    const refused = await metric(ctxgate.url, 'ctxgate_websocket_history_refused_total')
    const live =
      (await metric(ctxgate.url, 'nodejs_heap_size_used_bytes')) +
      (await metric(ctxgate.url, 'nodejs_external_memory_bytes'))
    for (const socket of sockets) socket.close()

    const total = (budget + preparing) / 1024 / 1024
    return (
      `| ${mb(budget)} + ${mb(preparing)} = ${total.toFixed(0)} MiB${label} | ${idle.toFixed(0)} | ${peak.toFixed(0)} | ${open.toFixed(0)} ` +
      `| +${(open - idle).toFixed(0)} (peak +${(peak - idle).toFixed(0)}) | ${mb(held)} MiB | ${refused} | ${mb(preparingPeak)} MiB | ${pauses} | ${mb(live)} MiB |`
    )
  } finally {
    await ctxgate.stop()
    await mock.stop()
  }
}

console.log(
  `${socketCount} WebSockets, each one response.create of ~${inputMb} MB (20 KB tool outputs), then one continuation`,
)
console.log(
  '| budget: history + preparing | RSS idle (MB) | RSS peak | RSS with sockets open | growth | history held | histories refused | preparing, peak sampled | reads paused | heap used + external |',
)
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
console.log(
  await measure(undefined, 'rewriteWorkers:\n  threads: 0\n', ', on the main thread (rewriteWorkers.threads 0)'),
)
console.log(await measure(undefined, '', ', rewrite workers (defaults)'))
console.log(await measure({ history: 64 * 1024 * 1024, preparing: 16 * 1024 * 1024 }))
