import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'
import { toJsonl } from '../../src/replay/conversation.ts'
import { syntheticRuns } from '../../src/replay/synthetic.ts'

// The built CLI (test/global-setup.ts keeps dist/ fresh): a process started through tsx compiles the sources again.
const cli = ['dist/cli.js']
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
  it('ends quietly when the reader of --export - closes the pipe early (| head)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'ctxgate-cli-'))
    const file = join(directory, 'run.jsonl')
    writeFileSync(file, syntheticRuns().map(toJsonl).join(''))
    const child = spawn(process.execPath, [...cli, 'replay', '--export', '-', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let errors = ''
    child.stderr.on('data', (data: Buffer) => (errors += data.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    // Like `head -1`: read one chunk, then close our end.
    await new Promise((resolve) => child.stdout.once('data', resolve))
    child.stdout.destroy()
    expect(await exited).toBe(0)
    expect(errors).toBe('')
  })

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
    // The served process exports Node's own metrics and which build it is, from the first scrape.
    const metrics = await (await request(`http://127.0.0.1:${port}/metrics`)).body.text()
    expect(metrics).toMatch(/^process_cpu_seconds_total \d/m)
    expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds /m)
    expect(metrics).toContain(`ctxgate_build_info{version="0.1.0",node_version="${process.versions.node}"} 1`)
    expect(metrics).toMatch(/^ctxgate_fail_open_total\{provider="anthropic",stage="prepare"\} 0$/m)

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
    const version = run(['--version'], {})
    expect(await version.exited).toBe(0)
    expect(version.output()).toBe(
      `ctxgate ${(JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version}\n`,
    )
    const unknown = run(['--nope'], {})
    expect(await unknown.exited).toBe(2)
    expect(unknown.output()).toBe('ctxgate: unknown option --nope\n(ctxgate --help lists every option)\n')
    const typo = run(['--metric-port', '9464'], {})
    expect(await typo.exited).toBe(2)
    expect(typo.output()).toContain('ctxgate: unknown option --metric-port (did you mean --metrics-port?)')
  })

  it('says in one line which setting to change when a port is taken, and exits non-zero', async () => {
    const holder = createServer()
    const taken = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)),
    )
    try {
      const main = run([], { CTXGATE_PORT: String(taken), CTXGATE_LOG_LEVEL: 'silent' })
      expect(await main.exited).toBe(1)
      expect(main.output()).toBe(
        `ctxgate: port 127.0.0.1:${taken} is already in use; set server.port (env CTXGATE_PORT, flag --port) to another port\n`,
      )
      const free = await freePort()
      const metrics = run(['--port', String(free), '--metrics-port', String(taken)], { CTXGATE_LOG_LEVEL: 'silent' })
      expect(await metrics.exited).toBe(1)
      expect(metrics.output()).toContain(
        `ctxgate: metrics port 127.0.0.1:${taken} is already in use; set metrics.port (env CTXGATE_METRICS_PORT, flag --metrics-port)`,
      )
      expect(metrics.output()).not.toMatch(/\n\s+at /)
    } finally {
      holder.close()
    }
    const same = run(['--port', '9555', '--metrics-port', '9555'], {})
    expect(await same.exited).toBe(2)
    expect(same.output()).toContain('the same as server.port')
  })
})
