import { startMockServer } from '../mock/server.ts'
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
export async function mock(flags: Flags): Promise<void> {
  const window = wholeNumber(flags, 'window', 1)
  const minCacheable = wholeNumber(flags, 'min-cacheable', 0)
  const agentSteps = wholeNumber(flags, 'agent-steps', 0)
  const cacheWrites = cacheWritesFlag(flags['cache-writes'])
  const server = await startMockServer({
    host: flags['host'] ?? '127.0.0.1',
    port: wholeNumber(flags, 'port', 0) ?? 8788,
    ...(window !== undefined ? { window } : {}),
    ...(minCacheable !== undefined ? { minCacheableTokens: minCacheable } : {}),
    ...(agentSteps !== undefined ? { agentSteps } : {}),
    cacheWrites,
  })
  const loop = agentSteps === undefined ? '' : ` (agent loop: ${agentSteps} tool calls per conversation)`
  process.stdout.write(`ctxgate mock upstream listening on ${server.url}${loop}, cache writes ${cacheWrites}\n`)
  const stop = (): void => void server.close().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
