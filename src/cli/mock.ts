import { startMockServer, type MockServer } from '../mock/server.ts'
import { StartupError } from './listen.ts'
import { startedByPackageScript, stopWhenParentExits } from './parent-watch.ts'
import { cacheWritesFlag, UsageError } from './replay.ts'

type Flags = Record<string, string | undefined>

/** A whole-number flag at least `minimum`, or a usage error that names the flag. */
function wholeNumber(flags: Flags, name: string, minimum: number): number | undefined {
  const raw = flags[name]
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (raw.trim() === '' || !Number.isInteger(value) || value < minimum)
    throw new UsageError(`--${name} must be a whole number of at least ${minimum}, got ${JSON.stringify(raw)}`)
  return value
}

/** `ctxgate mock`: the fake upstream as its own process (demos, compose, manual checks). */
export async function mock(flags: Flags, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const originalParent = process.ppid
  const window = wholeNumber(flags, 'window', 1)
  const minCacheable = wholeNumber(flags, 'min-cacheable', 0)
  const agentSteps = wholeNumber(flags, 'agent-steps', 0)
  const agentRereadEvery = wholeNumber(flags, 'agent-reread-every', 2)
  const cacheWrites = cacheWritesFlag(flags['cache-writes'])
  const host = flags['host'] ?? '127.0.0.1'
  const port = wholeNumber(flags, 'port', 0) ?? 8788
  let server: MockServer
  try {
    server = await startMockServer({
      host,
      port,
      ...(window !== undefined ? { window } : {}),
      ...(minCacheable !== undefined ? { minCacheableTokens: minCacheable } : {}),
      ...(agentSteps !== undefined ? { agentSteps } : {}),
      ...(agentRereadEvery !== undefined ? { agentRereadEvery } : {}),
      cacheWrites,
    })
  } catch (error) {
    throw listenProblem(error, host, port)
  }
  const rereads = agentRereadEvery === undefined ? '' : `, every ${agentRereadEvery}th re-reads a file read before`
  const loop = agentSteps === undefined ? '' : ` (agent loop: ${agentSteps} tool calls per conversation${rereads})`
  process.stdout.write(`ctxgate mock upstream listening on ${server.url}${loop}, cache writes ${cacheWrites}\n`)
  const stop = (): void => void server.close().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  // Under npx the parent is npm: a killed `npx ctxgate mock &` must not leave the mock behind.
  if (startedByPackageScript(env)) stopWhenParentExits(stop, { originalParent })
}

/** One line saying which flag to change, instead of Node's stack trace. */
function listenProblem(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE')
    return new StartupError(`port ${host}:${port} is already in use; pass --port to another port`)
  if (code === 'EACCES')
    return new StartupError(`port ${host}:${port} needs privileges this process does not have; pass --port`)
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new StartupError(`cannot listen on ${host}:${port}: no such address on this machine; pass --host`)
  return error
}
