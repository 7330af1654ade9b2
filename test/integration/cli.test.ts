import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'

const cli = ['--import', 'tsx', 'src/cli.ts']
let mock: MockServer

beforeAll(async () => {
  mock = await startMockServer()
})
afterAll(() => mock.close())

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

function run(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [...cli, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout?.on('data', (data: Buffer) => (text += data.toString()))
  child.stderr?.on('data', (data: Buffer) => (text += data.toString()))
  return { child, output: () => text, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) }
}

async function waitForListening(output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!output().includes('ctxgate listening')) {
    if (Date.now() > deadline) throw new Error(`ctxgate did not start:\n${output()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('ctxgate CLI', () => {
  it('starts from environment variables, serves health, proxies, and drains a stream on SIGTERM', async () => {
    const port = await freePort()
    const proxy = run([], {
      CTXGATE_PORT: String(port),
      CTXGATE_ANTHROPIC_URL: mock.url,
      CTXGATE_OPENAI_URL: mock.url,
      CTXGATE_LOG_LEVEL: 'info',
    })
    await waitForListening(proxy.output)
    const health = await request(`http://127.0.0.1:${port}/healthz`)
    expect(await health.body.json()).toEqual({ status: 'ok' })

    // A slow stream is in flight when SIGTERM arrives; it must still finish whole.
    const stream = await request(`http://127.0.0.1:${port}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-mock-chunk-delay-ms': '40' },
      body: JSON.stringify({ model: 'm', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    proxy.child.kill('SIGTERM')
    const text = await stream.body.text()
    expect(text.trimEnd().endsWith('event: message_stop\ndata: {"type":"message_stop"}')).toBe(true)
    expect(await proxy.exited).toBe(0)
    expect(proxy.output()).toContain('shutting down')
    expect(proxy.output()).toMatch(/"path":"\/v1\/messages".*"outcome":"complete".*"msg":"request"/)
  })

  it('refuses bad configuration with exit code 2 and a message that names the fix', async () => {
    const proxy = run([], { CTXGATE_PORT: 'not-a-port', CTXGATE_ANTHROPIC_URL: 'nope' })
    expect(await proxy.exited).toBe(2)
    expect(proxy.output()).toContain('CTXGATE_PORT: expected a whole number, got "not-a-port"')
    expect(proxy.output()).toContain('CTXGATE_ANTHROPIC_URL')
  })

  it('prints usage for --help and refuses unknown flags', async () => {
    const help = run(['--help'], {})
    expect(await help.exited).toBe(0)
    expect(help.output()).toContain('ctxgate mock')
    const unknown = run(['--nope'], {})
    expect(await unknown.exited).toBe(2)
    expect(unknown.output()).toContain("Unknown option '--nope'")
  })
})
