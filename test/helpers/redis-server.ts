import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { Redis } from 'ioredis'

export interface RedisServer {
  readonly url: string
  readonly port: number
  stop(): Promise<void>
  start(): Promise<void>
  /** SIGSTOP / SIGCONT: the server keeps its connections but answers nothing until resumed. */
  pause(): void
  resume(): void
}

/** A throwaway redis-server on a free loopback port, with persistence off. .ci/run installs it. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    })
    child.on('error', () => undefined)
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    probe.on('error', () => undefined)
    const deadline = Date.now() + 10_000
    for (;;) {
      try {
        await probe.connect()
        await probe.ping()
        probe.disconnect()
        return
      } catch (error) {
        probe.disconnect()
        if (Date.now() > deadline)
          throw new Error(`redis-server did not start on ${port} (is redis-server installed? .ci/run installs it)`, {
            cause: error,
          })
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  }
  const stop = async (): Promise<void> => {
    const running = child
    child = undefined
    if (!running || running.exitCode !== null) return
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve())
      running.kill('SIGKILL')
    })
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}
