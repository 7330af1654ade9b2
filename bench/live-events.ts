/**
 * /ctxgate/events under a crowd, with Redis: the live history is filled to its bounds (50 sessions
 * × 200 requests, a snapshot of a few MB), then N opens arrive at once, with Redis answering and with
 * Redis paused (SIGSTOP). Prints how many were accepted against the cap, ctxgate's RSS against the
 * budget, and whether idle readers are ended. Usage: tsx bench/live-events.ts [opens=400] [idleMs=3000]
 */
import { readFileSync } from 'node:fs'
import { request } from 'undici'
import { RedisLiveMirror } from '../src/live/redis-mirror.ts'
import { countersOf } from '../src/live/session-summary.ts'
import { defaultHistoryBounds } from '../src/live/live-history.ts'
import type { LiveEvent } from '../src/live/live-event.ts'
import { zeroUsage } from '../src/model-call/usage.ts'
import { startRedisServer } from '../test/helpers/redis-server.ts'
import { startCtxgate, startMockProcess } from './peers.ts'

const opens = Number(process.argv[2] ?? 400)
const idleMs = Math.max(1_000, Number(process.argv[3] ?? 3_000))
const maxStreams = 32
const budgetBytes = 64 * 1024 * 1024

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
}

const event = (session: string, at: number): LiveEvent => ({
  at,
  session,
  client: 'Claude Code',
  model: 'claude-sonnet-4-5',
  route: 'anthropic-messages',
  status: 200,
  durationMs: 5,
  usage: { ...zeroUsage, inputTokens: 10, cacheReadTokens: 1_000 },
  estimatedBefore: 150_000,
  estimatedAfter: 120_000,
  budget: 180_000,
  window: 200_000,
  folded: 3,
  cleared: 12,
  dropped: 0,
  tokensRemoved: 30_000,
  newBatch: false,
  batchReason: 'budget',
  refusalAvoided: false,
})

async function fill(url: string, prefix: string): Promise<void> {
  const mirror = new RedisLiveMirror({
    url,
    keyPrefix: prefix,
    ttlMs: 3_600_000,
    bounds: defaultHistoryBounds,
    timeoutMs: 2_000,
    onError: () => undefined,
  })
  while (!(await mirror.snapshot())) await new Promise((resolve) => setTimeout(resolve, 50))
  let at = Date.now()
  const { maxSessions, maxRequestsPerSession } = defaultHistoryBounds
  for (let session = 0; session < maxSessions; session++) {
    const writes: Promise<unknown>[] = []
    for (let index = 0; index < maxRequestsPerSession; index++) {
      const item = event(`session-${session.toString().padStart(40, '0')}`, at++)
      writes.push(mirror.record(item, countersOf(item, false), 0))
    }
    await Promise.all(writes)
  }
  await mirror.close()
}

interface Open {
  readonly status: number
  readonly ended: Promise<number>
  close(): void
}

/** Opens one stream; a reader that reads (and so takes its snapshot) but then only gets heartbeats. */
async function open(url: string): Promise<Open> {
  const response = await request(`${url}/ctxgate/events`)
  const started = Date.now()
  const ended = new Promise<number>((resolve) => {
    const done = (): void => resolve(Date.now() - started)
    response.body.on('end', done).on('error', done).on('close', done)
  })
  response.body.on('data', () => undefined)
  return { status: response.statusCode, ended, close: () => response.body.destroy() }
}

async function metric(url: string, name: string): Promise<string> {
  const text = await (await request(`${url}/metrics`)).body.text()
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .map((line) => line.replace(name, '').trim())
    .join(' ')
}

const redis = await startRedisServer()
const mock = await startMockProcess()
const prefix = 'benchlive:'
await fill(redis.url, prefix)
const configYaml =
  `sessions:\n  redisUrl: ${redis.url}\n  redisKeyPrefix: "${prefix}"\n` +
  `live:\n  maxStreams: ${maxStreams}\n  maxBufferedBytes: ${budgetBytes}\n  idleTimeoutMs: ${idleMs}\n`
const ctxgate = await startCtxgate(mock.url, true, { configYaml })
try {
  const snapshotBytes = Buffer.byteLength(
    await (await request(`${ctxgate.url}/ctxgate/events`)).body.text().catch(() => ''),
  )
  console.log(
    `${opens} concurrent /ctxgate/events opens; cap ${maxStreams}, budget ${budgetBytes / 1024 / 1024} MiB, ` +
      `idle timeout ${idleMs} ms; snapshot ${(snapshotBytes / 1e6).toFixed(1)} MB (50 sessions × 200 requests in Redis)`,
  )
  console.log(
    '| Redis | accepted | refused | RSS before (MB) | RSS peak | growth | idle readers ended | longest stream (ms) |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
  for (const state of ['answering', 'paused (SIGSTOP)'] as const) {
    // Let the previous round's streams go first.
    while ((await metric(ctxgate.url, 'ctxgate_live_streams ')) !== '0') await new Promise((r) => setTimeout(r, 100))
    const before = rssMb(ctxgate.pid)
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(ctxgate.pid))), 20)
    if (state !== 'answering') redis.pause()
    const streams = await Promise.all(Array.from({ length: opens }, () => open(ctxgate.url)))
    const accepted = streams.filter((stream) => stream.status === 200)
    const durations = await Promise.all(
      accepted.map((stream) =>
        Promise.race([stream.ended, new Promise<number>((r) => setTimeout(() => r(-1), idleMs * 3))]),
      ),
    )
    clearInterval(sampler)
    if (state !== 'answering') redis.resume()
    for (const stream of streams) stream.close()
    const ended = durations.filter((ms) => ms >= 0).length
    console.log(
      `| ${state} | ${accepted.length} | ${streams.length - accepted.length} | ${before.toFixed(0)} | ${peak.toFixed(0)} ` +
        `| +${(peak - before).toFixed(0)} | ${ended} of ${accepted.length} | ${Math.max(...durations)} |`,
    )
  }
  console.log(`refused by reason: ${await metric(ctxgate.url, 'ctxgate_live_streams_refused_total')}`)
  console.log(`cut by reason: ${await metric(ctxgate.url, 'ctxgate_live_streams_cut_total')}`)
} finally {
  await ctxgate.stop()
  await mock.stop()
  await redis.stop()
}
