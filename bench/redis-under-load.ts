/**
 * Does a conversation keep its frozen decisions on Redis when ctxgate's cores are busy? One long
 * conversation (1,200 requests by default) runs beside 31 shorter ones, always 32 at once, through
 * one ctxgate in this process (its event loop shared with the fake upstream and the clients, so it
 * is busy), first on the memory store, then on Redis. Optional spinning processes make the cores busier.
 * Printed per store: turn resets (a request whose logged turn is not its place in the conversation:
 * its state was lost), batches of the long conversation, and how many conversations made a different
 * number of batches than on the memory store.
 * Usage: tsx bench/redis-under-load.ts [--long 1200] [--short 60] [--concurrent 32] [--burners 2]
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { startRedisServer } from '../test/helpers/redis-server.ts'
import { eventually, startStack, type Stack } from '../test/helpers/stack.ts'

const { values } = parseArgs({
  options: {
    long: { type: 'string', default: '1200' },
    short: { type: 'string', default: '60' },
    concurrent: { type: 'string', default: '32' },
    burners: { type: 'string', default: '2' },
  },
})
const longRequests = Number(values.long)
const shortRequests = Number(values.short)
const concurrent = Number(values.concurrent)
const burners = Number(values.burners)

const models = [{ match: '*', window: 12_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }]

/** Request `index` (1-based) of conversation `id`: its task, then index − 1 tool rounds of ~160 characters. */
function body(id: string, index: number): string {
  const messages: unknown[] = [{ role: 'user', content: `Task ${id}: find why the build fails and fix it.` }]
  for (let round = 1; round < index; round++) {
    const call = `toolu_${round}`
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: call, name: 'run', input: { step: round } }] })
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: call, content: `${id} step ${round}: ok\n`.repeat(8) }],
    })
  }
  return JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 256,
    system: 'You are a careful coding agent.',
    tools: [{ name: 'run', description: 'Run a shell command', input_schema: { type: 'object' } }],
    messages,
  })
}

interface Outcome {
  readonly resets: number
  /** Per conversation: requests logged and batches made. */
  readonly sessions: Map<string, { requests: number; batches: number }>
  readonly requests: number
  readonly seconds: number
  readonly storeErrors: number
}

async function runOn(stack: Stack): Promise<Outcome> {
  const agent = new Agent({ connections: concurrent })
  const started = performance.now()
  let requests = 0
  const send = async (id: string, index: number): Promise<void> => {
    const answer = await request(`${stack.proxyUrl}/v1/messages`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-ctxgate-session': id },
      body: body(id, index),
    })
    await answer.body.dump()
    if (answer.statusCode !== 200) throw new Error(`${id} #${index}: ${answer.statusCode}`)
    requests++
  }
  const long = { done: false }
  const longRun = (async () => {
    for (let index = 1; index <= longRequests; index++) await send('long', index)
    long.done = true
  })()
  const shortRun = async (slot: number): Promise<void> => {
    for (let generation = 0; !long.done; generation++)
      for (let index = 1; index <= shortRequests && !long.done; index++) await send(`s${slot}-${generation}`, index)
  }
  await Promise.all([longRun, ...Array.from({ length: concurrent - 1 }, (_, slot) => shortRun(slot))])
  await agent.close()
  return { ...readLog(stack.logLines), requests, seconds: (performance.now() - started) / 1000 }
}

/** Turn resets and batches per conversation, from ctxgate's own request lines. */
function readLog(lines: readonly string[]): Omit<Outcome, 'requests' | 'seconds'> {
  const sessions = new Map<string, { requests: number; batches: number }>()
  let resets = 0
  let storeErrors = 0
  for (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string; session?: string; turn?: number; batch?: unknown }
    if (entry.msg?.startsWith('session store')) storeErrors++
    if (entry.msg !== 'request' || entry.session === undefined) continue
    const session = sessions.get(entry.session) ?? { requests: 0, batches: 0 }
    session.requests++
    if (entry.turn !== session.requests) resets++
    if (entry.batch !== undefined) session.batches++
    sessions.set(entry.session, session)
  }
  return { resets, sessions, storeErrors }
}

/** Conversations run to the same length on both stores, and how many of them made a different number of batches. */
function compare(memory: Outcome, other: Outcome): { compared: number; differing: number } {
  let compared = 0
  let differing = 0
  for (const [id, session] of memory.sessions) {
    const twin = other.sessions.get(id)
    if (twin?.requests !== session.requests) continue
    compared++
    if (twin.batches !== session.batches) differing++
  }
  return { compared, differing }
}

const spinners: ChildProcess[] = Array.from({ length: burners }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
)
const redis = await startRedisServer()
console.log(
  `\n## ${longRequests}-request conversation beside ${concurrent - 1} others (${shortRequests} requests each, restarted), ${concurrent} at once, ${burners} spinning processes\n`,
)
console.log(
  '| store | requests | req/s | turn resets | long conversation: batches | conversations compared | of them with other batches than memory | store warnings logged |',
)
console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
const row = (name: string, outcome: Outcome, memory: Outcome): void => {
  const { compared, differing } = compare(memory, outcome)
  console.log(
    `| ${name} | ${outcome.requests} | ${(outcome.requests / outcome.seconds).toFixed(0)} | ${outcome.resets} | ${outcome.sessions.get('long')?.batches ?? 0} | ${compared} | ${differing} | ${outcome.storeErrors} |`,
  )
}
try {
  const memory = await startStack({ mock: { window: 1_000_000 }, config: { models } })
  const onMemory = await runOn(memory)
  await memory.close()
  row('memory', onMemory, onMemory)
  const onRedis = await startStack({
    mock: { window: 1_000_000 },
    config: { models, sessions: { redisUrl: redis.url, redisKeyPrefix: 'bench:' } },
  })
  await eventually(() => {
    if (!onRedis.app.isReady()) throw new Error('not ready')
  })
  await new Promise((resolve) => setTimeout(resolve, 500))
  const redisOutcome = await runOn(onRedis)
  await onRedis.close()
  row('redis', redisOutcome, onMemory)
} finally {
  for (const spinner of spinners) spinner.kill('SIGKILL')
  await redis.stop()
}
