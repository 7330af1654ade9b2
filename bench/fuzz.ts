/**
 * Bounded fuzzing of ctxgate as a separate process in front of the fake upstream: hostile HTTP bodies
 * on every model route, long well-paired tool conversations that force rewriting, and WebSocket
 * sessions mixing hostile messages with well-paired continuations. Prints ctxgate-made 5xx, crashes
 * (the process gone or /healthz failing) and pairing breaks (the upstream refusing a tool pairing
 * the client had right), and their totals on one line; exits 1 when any is above 0 (`npm run soak`
 * runs it after the soak with smaller counts). Usage: tsx bench/fuzz.ts [httpBodies=1500] [sockets=150] [seed=1]
 */
import fc from 'fast-check'
import { request } from 'undici'
import { WebSocket } from 'ws'
import { startCtxgate, startMockProcess } from './peers.ts'

const httpBodies = Number(process.argv[2] ?? 1_500)
const socketSessions = Number(process.argv[3] ?? 150)
const seed = Number(process.argv[4] ?? 1)

const pairingRefusal =
  /tool_use` ids were found without|unexpected `tool_use_id`|did not have response messages|No tool output found/
const hostileValue = fc.oneof(
  fc.anything(),
  fc.constantFrom({ toString: 1 }, { valueOf: 2, toString: 3 }, 1e308, -1, '1e400', null, [], {}),
)
const routes = ['/v1/messages', '/v1/chat/completions', '/v1/responses', '/messages', '/v1/messages/count_tokens']

/** Any JSON-ish body, from random values to chat-shaped ones with wrong types. */
const hostileBody = fc.oneof(
  hostileValue.map((value) => JSON.stringify(value) ?? 'null'),
  fc
    .record(
      {
        model: fc.oneof(fc.constantFrom('claude-sonnet-4-5', 'gpt-4.1'), hostileValue),
        max_tokens: fc.oneof(fc.integer(), hostileValue),
        stream: fc.oneof(fc.boolean(), hostileValue),
        metadata: fc.oneof(fc.record({ user_id: fc.oneof(fc.string(), hostileValue) }), hostileValue),
        messages: fc.oneof(
          fc.array(fc.record({ role: fc.string(), content: hostileValue }), { maxLength: 6 }),
          hostileValue,
        ),
        input: hostileValue,
        system: hostileValue,
        tools: hostileValue,
      },
      { requiredKeys: [] },
    )
    .map((body) => JSON.stringify(body)),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
)

/** A long Anthropic tool loop, paired right, with a random seasoning of extra fields. */
function pairedMessages(rounds: number, size: number, extra: Record<string, unknown>): unknown {
  const messages: unknown[] = [{ role: 'user', content: 'Fix the build.' }]
  for (let round = 0; round < rounds; round++) {
    const id = `toolu_${round}`
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'read', input: { path: `f${round}` } }],
    })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'x'.repeat(size) }] })
  }
  return { model: 'claude-sonnet-4-5', max_tokens: 32, messages, ...extra }
}

function pairedChat(rounds: number, size: number): unknown {
  const messages: unknown[] = [{ role: 'user', content: 'Fix the build.' }]
  for (let round = 0; round < rounds; round++) {
    const id = `call_${round}`
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: '{}' } }],
    })
    messages.push({ role: 'tool', tool_call_id: id, content: 'y'.repeat(size) })
  }
  return { model: 'gpt-4.1', messages }
}

interface Counts {
  sent: number
  ctxgate5xx: number
  upstream5xx: number
  pairingBreaks: number
  statuses: Map<number, number>
}

async function post(url: string, path: string, body: string, counts: Counts): Promise<void> {
  counts.sent++
  const answer = await request(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-fuzz',
      authorization: 'Bearer sk-fuzz',
      'anthropic-version': '2023-06-01',
    },
    body,
  })
  const text = await answer.body.text()
  counts.statuses.set(answer.statusCode, (counts.statuses.get(answer.statusCode) ?? 0) + 1)
  if (answer.statusCode >= 500) {
    if (answer.headers['x-ctxgate-error-code'] !== undefined) counts.ctxgate5xx++
    else counts.upstream5xx++
  }
  if (answer.statusCode === 400 && pairingRefusal.test(text)) counts.pairingBreaks++
}

async function fuzzHttp(url: string): Promise<Counts> {
  const counts: Counts = { sent: 0, ctxgate5xx: 0, upstream5xx: 0, pairingBreaks: 0, statuses: new Map() }
  const hostile = fc.sample(fc.tuple(fc.constantFrom(...routes), hostileBody), {
    numRuns: Math.ceil(httpBodies * 0.8),
    seed,
  })
  for (let start = 0; start < hostile.length; start += 16)
    await Promise.all(hostile.slice(start, start + 16).map(([path, body]) => post(url, path, body, counts)))
  const paired = fc.sample(
    fc.tuple(
      fc.integer({ min: 5, max: 60 }),
      fc.integer({ min: 200, max: 4_000 }),
      fc.boolean(),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue(), { maxKeys: 3 }),
    ),
    { numRuns: Math.floor(httpBodies * 0.2), seed: seed + 1 },
  )
  for (const [rounds, size, chat, extra] of paired) {
    // Extra fields must not name the ones that decide the request's shape.
    for (const key of ['model', 'messages', 'max_tokens', 'stream', 'tools', 'system']) delete extra[key]
    if (chat) await post(url, '/v1/chat/completions', JSON.stringify(pairedChat(rounds, size)), counts)
    else await post(url, '/v1/messages', JSON.stringify(pairedMessages(rounds, size, extra)), counts)
  }
  return counts
}

interface SocketCounts {
  sessions: number
  messages: number
  ctxgateErrors: number
  closes1011: number
  pairingBreaks: number
}

async function fuzzSockets(url: string): Promise<SocketCounts> {
  const counts: SocketCounts = { sessions: 0, messages: 0, ctxgateErrors: 0, closes1011: 0, pairingBreaks: 0 }
  const plans = fc.sample(
    fc.array(
      fc.oneof(
        hostileValue.map((value) => JSON.stringify(value) ?? 'null'),
        fc
          .record({ type: fc.constant('response.create'), model: hostileValue, input: hostileValue })
          .map((m) => JSON.stringify(m)),
        fc.constant('continue'),
        fc.constant('binary'),
      ),
      { minLength: 1, maxLength: 6 },
    ),
    { numRuns: socketSessions, seed: seed + 2 },
  )
  for (const plan of plans) {
    counts.sessions++
    const socket = new WebSocket(`${url.replace('http', 'ws')}/v1/responses`, {
      headers: { authorization: 'Bearer sk-fuzz' },
    })
    const opened = await new Promise<boolean>((resolve) =>
      socket.once('open', () => resolve(true)).once('error', () => resolve(false)),
    )
    if (!opened) continue
    let latest: string | undefined
    let round = 0
    socket.on('message', (data: Buffer) => {
      const text = String(data)
      let event: { type?: string; status?: number; error?: { message?: string }; response?: { id?: string } } = {}
      try {
        event = JSON.parse(text) as typeof event
      } catch {
        return
      }
      if (event.type === 'response.completed' && event.response?.id) latest = event.response.id
      // The fake upstream sends no 5xx without a fault: a 5xx error event here is ctxgate's.
      if (event.type === 'error' && (event.status ?? 0) >= 500) counts.ctxgateErrors++
      if (event.type === 'error' && pairingRefusal.test(event.error?.message ?? '')) counts.pairingBreaks++
    })
    const closedWith = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)))
    for (const step of plan) {
      if (socket.readyState !== socket.OPEN) break
      counts.messages++
      if (step === 'binary') socket.send(Buffer.from([0xff, 0x00, 0x7b]), { binary: true })
      else if (step === 'continue') {
        const id = `call_fuzz_${round++}`
        const input = [
          { type: 'function_call', call_id: id, name: 'read', arguments: '{}' },
          { type: 'function_call_output', call_id: id, output: 'z'.repeat(2_000) },
        ]
        socket.send(
          JSON.stringify({
            type: 'response.create',
            model: 'gpt-4.1',
            store: false,
            input,
            ...(latest ? { previous_response_id: latest } : {}),
          }),
        )
      } else socket.send(step)
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.close()
    const code = await Promise.race([
      closedWith,
      new Promise<number>((resolve) => setTimeout(() => resolve(-1), 2_000)),
    ])
    if (code === 1011) counts.closes1011++
    if (code === -1) socket.terminate()
  }
  return counts
}

const mock = await startMockProcess()
// A small window so long conversations are rewritten (cleared, folded, dropped) on the way.
const configYaml =
  'models:\n  - { match: "*", window: 16000, budget: 0.9, minCacheableTokens: 100, thinkingBoundToPrefix: false }\n'
const ctxgate = await startCtxgate(mock.url, true, { configYaml })
try {
  const http = await fuzzHttp(ctxgate.url)
  const sockets = await fuzzSockets(ctxgate.url)
  let alive = true
  try {
    process.kill(ctxgate.pid, 0)
    alive = (await request(`${ctxgate.url}/healthz`)).statusCode === 200
  } catch {
    alive = false
  }
  console.log(`seed ${seed}; ctxgate rewriting against a 16k window`)
  console.log('| part | sent | ctxgate 5xx (status or error event) | upstream 5xx | 1011 closes | pairing breaks |')
  console.log('|---|---:|---:|---:|---:|---:|')
  console.log(`| HTTP bodies | ${http.sent} | ${http.ctxgate5xx} | ${http.upstream5xx} | — | ${http.pairingBreaks} |`)
  console.log(
    `| WebSocket sessions (${sockets.messages} messages) | ${sockets.sessions} | ${sockets.ctxgateErrors} | — | ${sockets.closes1011} | ${sockets.pairingBreaks} |`,
  )
  console.log(`crashes: ${alive ? 0 : 1} (process alive and /healthz 200 at the end: ${alive})`)
  // The three counts `npm run soak` is judged on, in one line; any of them above 0 fails the run.
  const ctxgate5xx = http.ctxgate5xx + sockets.ctxgateErrors + sockets.closes1011
  const pairingBreaks = http.pairingBreaks + sockets.pairingBreaks
  const crashes = alive ? 0 : 1
  console.log(`fuzz totals: ctxgate 5xx ${ctxgate5xx}, crashes ${crashes}, pairing breaks ${pairingBreaks}`)
  if (ctxgate5xx + crashes + pairingBreaks > 0) process.exitCode = 1
  console.log(
    `HTTP statuses: ${[...http.statuses]
      .toSorted(([a], [b]) => a - b)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ')}`,
  )
} finally {
  await ctxgate.stop()
  await mock.stop()
}
