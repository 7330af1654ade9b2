import { startMockServer } from '../mock/server.ts'

/** `ctxgate mock`: the fake upstream as its own process (demos, compose, manual checks). */
export async function mock(flags: Record<string, string | undefined>): Promise<void> {
  const server = await startMockServer({
    host: flags['host'] ?? '127.0.0.1',
    port: Number(flags['port'] ?? 8788),
    ...(flags['window'] ? { window: Number(flags['window']) } : {}),
    ...(flags['min-cacheable'] ? { minCacheableTokens: Number(flags['min-cacheable']) } : {}),
    ...(flags['agent-steps'] ? { agentSteps: Number(flags['agent-steps']) } : {}),
  })
  process.stdout.write(`ctxgate mock upstream listening on ${server.url}\n`)
  const stop = (): void => void server.close().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
