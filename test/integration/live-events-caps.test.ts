import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedisServer()
})
afterAll(() => redis?.stop())

interface Opened {
  readonly status: number
  readonly ended: Promise<void>
  close(): void
}

/** Opens /ctxgate/events and reads it like a page would; `ended` settles when ctxgate ends the stream. */
async function openEvents(stack: Stack): Promise<Opened> {
  const response = await request(`${stack.proxyUrl}/ctxgate/events`)
  const ended = new Promise<void>((resolve) => {
    response.body.on('end', resolve)
    response.body.on('error', () => resolve())
    response.body.on('close', resolve)
  })
  response.body.on('data', () => undefined)
  return { status: response.statusCode, ended, close: () => response.body.destroy() }
}

async function metric(stack: Stack, name: string): Promise<string> {
  const text = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .join('\n')
}

describe('/ctxgate/events caps with Redis', () => {
  const config = (prefix: string, idleTimeoutMs = 300_000) => ({
    log: { level: 'silent' as const },
    sessions: { redisUrl: redis.url, redisKeyPrefix: prefix },
    live: { maxStreams: 4, idleTimeoutMs },
  })

  it('does not let concurrent opens pass the stream cap while the snapshot is read from Redis', async () => {
    const stack = await startStack({ config: config('capsa:') })
    try {
      const opened = await Promise.all(Array.from({ length: 40 }, () => openEvents(stack)))
      expect(opened.filter((stream) => stream.status === 200)).toHaveLength(4)
      expect(opened.filter((stream) => stream.status === 503)).toHaveLength(36)
      expect(await metric(stack, 'ctxgate_live_streams ')).toBe('ctxgate_live_streams 4')
      expect(await metric(stack, 'ctxgate_live_streams_refused_total')).toContain('reason="full"} 36')
      for (const stream of opened) stream.close()
    } finally {
      await stack.close()
    }
  })

  it('does not let concurrent opens pass the stream cap while Redis is stalled', async () => {
    const stack = await startStack({ config: config('capsb:') })
    redis.pause()
    try {
      const opened = await Promise.all(Array.from({ length: 40 }, () => openEvents(stack)))
      expect(opened.filter((stream) => stream.status === 200)).toHaveLength(4)
      for (const stream of opened) stream.close()
    } finally {
      redis.resume()
      await stack.close()
    }
  })

  it('does not let idle readers hold every slot: heartbeats are not progress, the idle ones are ended', async () => {
    const stack = await startStack({ config: config('capsc:', 1_000) })
    try {
      const readers = await Promise.all(Array.from({ length: 4 }, () => openEvents(stack)))
      expect(readers.every((stream) => stream.status === 200)).toBe(true)
      expect((await openEvents(stack)).status).toBe(503)
      await Promise.all(readers.map((stream) => stream.ended))
      await eventually(async () =>
        expect((await metric(stack, 'ctxgate_live_streams ')).trim()).toBe('ctxgate_live_streams 0'),
      )
      expect(await metric(stack, 'ctxgate_live_streams_cut_total')).toContain('reason="idle"} 4')
      const next = await openEvents(stack)
      expect(next.status).toBe(200)
      next.close()
    } finally {
      await stack.close()
    }
  })
})
