import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { Registry } from 'prom-client'
import { Agent, request } from 'undici'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config/load-config.ts'
import { createLogger } from '../log/logger.ts'
import { startMockServer } from '../mock/server.ts'

/**
 * `ctxgate demo`: the fake upstream and ctxgate side by side in one process, a few calls through
 * each route (one with an injected 529), and what ctxgate logged for them. No network needed.
 */
export async function demo(): Promise<void> {
  const mock = await startMockServer()
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const config = loadConfig({ overrides: { server: { port: 0 }, upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } }, retry: { baseDelayMs: 50 } } })
  const app = await buildApp({ config, logger: createLogger('info', sink), registry: new Registry() })
  await app.server.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`
  const dispatcher = new Agent()
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<string> => {
    const answer = await request(`${base}${path}`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    return answer.body.text()
  }

  const system = [{ type: 'text', text: 'You are a careful coding agent. '.repeat(300), cache_control: { type: 'ephemeral' } }]
  const calls: [string, () => Promise<string>][] = [
    ['Anthropic, JSON, cache write', () => post('/v1/messages', { model: 'claude-sonnet-5', max_tokens: 64, system, messages: [{ role: 'user', content: 'List the files.' }] }, { 'anthropic-version': '2023-06-01' })],
    ['Anthropic, stream, cache read', () => post('/v1/messages', { model: 'claude-sonnet-5', max_tokens: 64, stream: true, system, messages: [{ role: 'user', content: 'List the files.' }] }, { 'anthropic-version': '2023-06-01' })],
    [
      'Anthropic, one 529, retried',
      () => {
        mock.faults.push([{ kind: 'status', status: 529 }])
        return post('/v1/messages', { model: 'claude-sonnet-5', max_tokens: 64, messages: [{ role: 'user', content: 'Again.' }] }, { 'anthropic-version': '2023-06-01' })
      },
    ],
    ['OpenAI chat, bare path', () => post('/chat/completions', { model: 'gpt-5', messages: [{ role: 'user', content: 'Hello' }] })],
    ['OpenAI models list (passthrough)', async () => (await request(`${base}/v1/models`, { dispatcher })).body.text()],
  ]
  process.stdout.write(`ctxgate ${base} -> fake upstream ${mock.url}\n\n`)
  for (const [label, call] of calls) {
    const body = await call()
    const log = lines.filter((line) => line['msg'] === 'request').at(-1) ?? {}
    const usage = /"usage":(\{[^}]*\})/.exec(body)?.[1] ?? ''
    process.stdout.write(`${label.padEnd(34)} status ${String(log['status'])}  attempts ${String(log['attempts'])}  ${String(log['durationMs'])} ms  ${usage}\n`)
  }
  await app.server.close()
  await mock.close()
  await dispatcher.close()
}
