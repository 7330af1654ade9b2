import { request as httpRequest, createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

// With rewriting off a request goes upstream before the rewrite hook reads it (src/forward/read-after-sending.ts);
// what the hook read (the log line's reason, the model, the usage reader) must still reach the one record of
// each request, whichever way the request ends.

const headers = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' }
const body = (stream: boolean): string =>
  JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, stream, messages: [{ role: 'user', content: 'hi' }] })

const stacks: Stack[] = []
const servers: Server[] = []
afterEach(async () => {
  for (const stack of stacks.splice(0)) await stack.close()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function rewritingOff(upstreamUrl?: string): Promise<Stack> {
  const upstreams = upstreamUrl ? { upstreams: { anthropic: { url: upstreamUrl }, openai: { url: upstreamUrl } } } : {}
  const stack = await startStack({ config: { rewrite: { enabled: false }, retry: { maxAttempts: 1 }, ...upstreams } })
  stacks.push(stack)
  return stack
}

/** Requests counted in `ctxgate_requests_total`, by model label. */
async function countedRequests(stack: Stack): Promise<Record<string, number>> {
  const metric = await stack.app.registry.getSingleMetric('ctxgate_requests_total')?.get()
  const byModel: Record<string, number> = {}
  for (const { labels, value } of metric?.values ?? []) {
    if (value === 0) continue
    const model = String(labels['model'])
    byModel[model] = (byModel[model] ?? 0) + value
  }
  return byModel
}

/** Requests the live page holds, read from the snapshot a newly opened page gets. */
async function liveRequests(stack: Stack): Promise<number> {
  const page = await request(`${stack.proxyUrl}/ctxgate/events`)
  let text = ''
  for await (const chunk of page.body) {
    text += (chunk as Buffer).toString('utf8')
    if (text.includes('\n\n')) break
  }
  page.body.destroy()
  const frame = text.split('\n\n')[0] ?? ''
  expect(frame).toContain('event: snapshot')
  const snapshot = JSON.parse(frame.split('data: ')[1] ?? '{}') as { sessions: { summary: { requests: number } }[] }
  return snapshot.sessions.reduce((sum, session) => sum + session.summary.requests, 0)
}

describe('a request sent before the hook reads it (rewriting off)', () => {
  it('is recorded exactly once, with what the hook read, when answered as JSON and as a stream', async () => {
    const stack = await rewritingOff()
    for (const stream of [false, true]) {
      const answer = await request(`${stack.proxyUrl}/v1/messages`, { method: 'POST', headers, body: body(stream) })
      expect(answer.statusCode).toBe(200)
      await answer.body.dump()
    }
    await eventually(() => expect(requestLogs(stack)).toHaveLength(2))
    for (const line of requestLogs(stack)) {
      expect(line).toMatchObject({ rewrite: 'disabled', outcome: 'complete', status: 200 })
      expect(line['outputTokens']).toBeGreaterThan(0)
    }
    expect(stack.mock.requests.map((sent) => sent.body)).toEqual([body(false), body(true)])
    expect(await countedRequests(stack)).toEqual({ 'claude-sonnet-4-5': 2 })
    expect(await liveRequests(stack)).toBe(2)
  })

  it('is recorded exactly once, with what the hook read, when the upstream cannot be reached', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const stack = await rewritingOff(`http://127.0.0.1:${port}`)
    const answer = await request(`${stack.proxyUrl}/v1/messages`, { method: 'POST', headers, body: body(false) })
    expect(answer.statusCode).toBe(502)
    await answer.body.dump()
    await eventually(() => expect(requestLogs(stack)).toHaveLength(1))
    expect(requestLogs(stack)[0]).toMatchObject({ rewrite: 'disabled', outcome: 'upstream_unreachable', status: 502 })
    expect(await countedRequests(stack)).toEqual({ 'claude-sonnet-4-5': 1 })
    expect(await liveRequests(stack)).toBe(1)
  })

  it('is recorded exactly once, with what the hook read, when the client leaves before the answer', async () => {
    let arrived = 0
    const silent = createServer((incoming) => {
      arrived++
      incoming.resume()
    })
    servers.push(silent)
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const stack = await rewritingOff(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`)
    const client = httpRequest(`${stack.proxyUrl}/v1/messages`, { method: 'POST', headers })
    client.on('error', () => undefined)
    client.end(body(false))
    await eventually(() => expect(arrived).toBe(1))
    client.destroy()
    await eventually(() => expect(requestLogs(stack)).toHaveLength(1))
    expect(requestLogs(stack)[0]).toMatchObject({ rewrite: 'disabled', outcome: 'client_closed' })
    expect(await countedRequests(stack)).toEqual({ 'claude-sonnet-4-5': 1 })
    expect(await liveRequests(stack)).toBe(1)
    // Nothing more is recorded later.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(requestLogs(stack)).toHaveLength(1)
  })
})
