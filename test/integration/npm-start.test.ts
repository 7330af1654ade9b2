import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { eventually } from '../helpers/stack.ts'

// `npm start` runs the build that `npm ci` made (the prepare script); without it there is nothing to start.
const built = existsSync(new URL('../../dist/cli.js', import.meta.url))

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** `npm start` as a process manager would run it; resolves once the proxy accepts connections. */
async function npmStart(port: number) {
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: new URL('../..', import.meta.url),
    env: { ...process.env, CTXGATE_PORT: String(port), CTXGATE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  let output = ''
  // ctxgate inherits npm's stdout, so its log lines keep arriving after npm itself is gone.
  npm.stdout.on('data', (data: Buffer) => (output += data.toString()))
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()))
  await eventually(async () => expect(await accepts(port)).toBe(true), 15_000)
  // npm's child is ctxgate itself (the start script execs node); known so a failed test leaves no orphan.
  const ctxgate = Number(
    execFileSync('pgrep', ['-P', String(npm.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')[0],
  )
  return { npm, exited, ctxgate, output: () => output }
}

function killLeftover(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // Already gone: the expected case.
  }
}

describe('npm start under a process manager', () => {
  it('has a build to start (npm ci runs the prepare script)', () => {
    expect(built, 'dist/cli.js is missing: run npm ci or npm run build').toBe(true)
  })

  it('stops ctxgate when npm gets SIGTERM, instead of leaving it running', async () => {
    const port = await freePort()
    const { npm, exited, ctxgate, output } = await npmStart(port)
    try {
      npm.kill('SIGTERM')
      await exited
      await eventually(async () => expect(await accepts(port)).toBe(false), 5_000)
      // The signal itself reached ctxgate (the script execs node), so it drained as on any SIGTERM.
      await eventually(() => expect(output()).toContain('"signal":"SIGTERM"'))
    } finally {
      killLeftover(ctxgate)
    }
  })

  it('stops ctxgate when npm itself is killed outright', async () => {
    const port = await freePort()
    const { npm, exited, ctxgate, output } = await npmStart(port)
    try {
      npm.kill('SIGKILL')
      await exited
      await eventually(async () => expect(await accepts(port)).toBe(false), 5_000)
      await eventually(() => expect(output()).toContain('"signal":"parent exited"'))
    } finally {
      killLeftover(ctxgate)
    }
  })
})
