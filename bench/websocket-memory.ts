/**
 * WebSocket history memory: N Responses sockets each send one large input, then continue it with
 * previous_response_id, and stay open. Prints ctxgate's RSS growth from idle, at its peak while the
 * sockets are prepared and settled with them open (2 s after the last answer), against the sockets'
 * memory budget it reports (ctxgate_websocket_memory_budget_bytes: the histories, the preparations'
 * working sets and the rewrite workers' heaps, docs/memory-budgets.md; a build without that gauge
 * is measured against websocket.maxHistoryBytes + websocket.maxPreparingBytes), and against that
 * two-setting sum for every build, with what it says it holds: with glibc's malloc as it comes and with the setting the container image starts it with
 * (the Dockerfile's MALLOC_MMAP_THRESHOLD_), with the rewrite workers and on the main thread, in one
 * run; with another build's dist/cli.js (a baseline checkout), each
 * row runs with it first, then with this one.
 * Usage: tsx bench/websocket-memory.ts [sockets=16] [inputMb=10] [baselineCli]
 */
import { readFileSync } from 'node:fs'
import { request } from 'undici'
import { WebSocket } from 'ws'
import { startCtxgate, startMockProcess } from './peers.ts'

const socketCount = Number(process.argv[2] ?? 16)
const inputMb = Number(process.argv[3] ?? 10)
const baselineCli = process.argv[4]

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

/** Sends one message; resolves with the type of the event that ended its response and the response's id. */
function turn(socket: WebSocket, message: unknown): Promise<{ type: string; id: string | undefined }> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer): void => {
      const event = JSON.parse(String(data)) as { type?: string; response?: { id?: string } }
      const type = event.type ?? ''
      if (!['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(type)) return
      socket.off('message', onMessage)
      resolve({ type, id: event.response?.id })
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

/** The sockets' memory budget as the build reports it: its parts and their sum, or undefined before the gauge existed. */
async function memoryBudget(url: string): Promise<{ parts: string; total: number } | undefined> {
  const text = await (await request(`${url}/metrics`)).body.text()
  const total = /^ctxgate_websocket_memory_budget_bytes (\d+)$/m.exec(text)?.[1]
  if (total === undefined) return undefined
  const part = (name: string): string =>
    mb(
      Number(
        new RegExp(`^ctxgate_websocket_memory_budget_part_bytes\\{part="${name}"\\} (\\d+)$`, 'm').exec(text)?.[1],
      ),
    )
  return { parts: `${part('history')} + ${part('preparing')} + ${part('workers')}`, total: Number(total) / megabytes }
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0)

/** RSS growth (MiB) against a ceiling. */
const against = (growth: number, ceiling: number): string =>
  `+${growth.toFixed(0)} ${growth <= ceiling ? 'within' : '**over**'}`

/** A build to run: this one, or another checkout's dist/cli.js. */
interface Build {
  readonly label: string
  readonly other?: { readonly cli: string; readonly label: string }
}

/** One ctxgate's run: its settings, and the environment it starts with. */
interface Setup {
  readonly budgets?: { readonly history: number; readonly preparing: number }
  readonly yaml?: string
  readonly label: string
  readonly env: Readonly<Record<string, string>>
}

/** The malloc setting the container image runs with (Dockerfile): the rows "as shipped" start with it. */
const imageMalloc = /MALLOC_MMAP_THRESHOLD_=(\d+)/.exec(readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8'))
const asShipped: Record<string, string> = imageMalloc ? { MALLOC_MMAP_THRESHOLD_: imageMalloc[1] as string } : {}

async function measure(build: Build, setup: Setup): Promise<string> {
  const { budgets, label } = setup
  const extraYaml = setup.yaml ?? ''
  const mock = await startMockProcess()
  const configYaml =
    (budgets === undefined
      ? ''
      : `websocket:\n  maxHistoryBytes: ${budgets.history}\n  maxPreparingBytes: ${budgets.preparing}\n`) + extraYaml
  const ctxgate = await startCtxgate(mock.url, true, {
    configYaml,
    env: setup.env,
    ...(build.other ? { other: build.other } : {}),
  })
  try {
    const budget = await metric(ctxgate.url, 'ctxgate_websocket_history_bytes_budget')
    const preparing = await metric(ctxgate.url, 'ctxgate_websocket_preparing_bytes_budget')
    const whole = await memoryBudget(ctxgate.url)
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
    const outcomes = new Map<string, number>()
    const sockets = await Promise.all(
      Array.from({ length: socketCount }, (_, index) => conversation(ctxgate.url, index, outcomes)),
    )
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    clearInterval(sampler)
    clearInterval(preparingSampler)
    const open = rssMb(ctxgate.pid)
    const pauses = await metric(ctxgate.url, 'ctxgate_websocket_reads_paused_total')
    const held = await metric(ctxgate.url, 'ctxgate_websocket_history_bytes')
    const refused = await metric(ctxgate.url, 'ctxgate_websocket_history_refused_total')
    const heap = await metric(ctxgate.url, 'nodejs_heap_size_total_bytes')
    const external = await metric(ctxgate.url, 'nodejs_external_memory_bytes')
    for (const socket of sockets) socket.close()

    const twoSettings = (budget + preparing) / megabytes
    const total = whole?.total ?? twoSettings
    const stated = whole
      ? `${whole.parts} = ${total.toFixed(0)} MiB`
      : `${mb(budget)} + ${mb(preparing)} = ${total.toFixed(0)} MiB (workers unbounded)`
    const ends = [...outcomes].map(([type, count]) => `${count} ${type}`).join(', ')
    return (
      `| ${build.label} | ${label} | ${stated} | ${idle.toFixed(0)} ` +
      `| ${against(peak - idle, total)} | ${against(open - idle, total)} ` +
      `| ${against(peak - idle, twoSettings)} ${twoSettings.toFixed(0)} | ${mb(held)} MiB | ${refused} ` +
      `| ${mb(preparingPeak)} MiB | ${pauses} | ${mb(heap)} + ${mb(external)} MiB | ${ends} |`
    )
  } finally {
    await ctxgate.stop()
    await mock.stop()
  }
}

/** One socket: a large input, then its continuation; the socket stays open. Counts how each turn ended. */
async function conversation(url: string, index: number, outcomes: Map<string, number>): Promise<WebSocket> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/v1/responses`, {
    headers: { authorization: 'Bearer sk-bench' },
    maxPayload: 64 * 1024 * 1024,
  })
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const count = (ended: { type: string }): void => void outcomes.set(ended.type, (outcomes.get(ended.type) ?? 0) + 1)
  const first = await turn(socket, {
    type: 'response.create',
    model: 'gpt-4.1',
    store: false,
    input: largeInput(index),
  })
  count(first)
  const more = [{ type: 'message', role: 'user', content: 'and then?' }]
  count(
    await turn(socket, {
      type: 'response.create',
      model: 'gpt-4.1',
      store: false,
      previous_response_id: first.id,
      input: more,
    }),
  )
  return socket
}

const builds: Build[] = [
  ...(baselineCli ? [{ label: 'baseline', other: { cli: baselineCli, label: 'baseline' } }] : []),
  { label: 'this build' },
]
console.log(
  `${socketCount} WebSockets, each one response.create of ~${inputMb} MB (20 KB tool outputs), then one continuation`,
)
console.log(
  "| build | setting | sockets' memory budget (MiB): history + preparing + workers | RSS idle (MiB) | RSS growth at its peak | RSS growth settled, sockets open | peak against history + preparing allowance | history held | histories refused | preparing, peak sampled | reads paused | heap total + external | turns ended |",
)
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|')
const megabytes = 1024 * 1024
const setups: Setup[] = [
  { label: 'defaults, glibc malloc as it comes', env: {} },
  { label: 'defaults, as the image runs it', env: asShipped },
  {
    label: 'on the main thread (threads 0), glibc malloc as it comes',
    yaml: 'rewriteWorkers:\n  threads: 0\n',
    env: {},
  },
]
console.log(`as the image runs it: ${JSON.stringify(asShipped)} (the Dockerfile's malloc setting)`)
for (const setup of setups) for (const build of builds) console.log(await measure(build, setup))
