import { Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import { Registry } from 'prom-client'
import { buildApp, type App, type AppDeps } from '../../src/app.ts'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { createLogger } from '../../src/log/logger.ts'
import { startMockServer, type MockServer, type MockServerOptions } from '../../src/mock/server.ts'
import type { Telemetry } from '../../src/telemetry/telemetry.ts'
import type { Logger } from 'pino'

export interface Stack {
  /** Base URL of ctxgate, e.g. http://127.0.0.1:PORT */
  readonly proxyUrl: string
  readonly mock: MockServer
  readonly app: App
  /** Every log line ctxgate wrote, raw. */
  readonly logLines: string[]
  readonly config: Readonly<Config>
  close(): Promise<void>
}

export interface StackOptions {
  readonly config?: DeepPartial<Config>
  readonly mock?: MockServerOptions
  readonly prepareFor?: AppDeps['prepareFor']
  /** pino level of the captured log (default info). */
  readonly logLevel?: string
  /** OpenTelemetry export, made once the config (the upstreams' addresses) is known. */
  readonly telemetry?: (config: Readonly<Config>, logger: Logger) => Telemetry
}

/** A fake upstream and a ctxgate pointed at it, both on real loopback ports. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const mock = await startMockServer(options.mock)
  const config = loadConfig({
    env: {},
    overrides: {
      server: { port: 0 },
      upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } },
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      ...options.config,
    } as DeepPartial<Config>,
  })
  const logLines: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean))
      callback()
    },
  })
  const logger = createLogger(options.logLevel ?? 'info', sink)
  const telemetry = options.telemetry?.(config, logger)
  const app = await buildApp({
    config,
    logger,
    registry: new Registry(),
    ...(options.prepareFor ? { prepareFor: options.prepareFor } : {}),
    ...(telemetry ? { telemetry } : {}),
  })
  await app.server.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.server.address() as AddressInfo
  return {
    proxyUrl: `http://127.0.0.1:${port}`,
    mock,
    app,
    logLines,
    config,
    async close() {
      await app.server.close()
      await mock.close()
    },
  }
}

/** Waits until `check` passes or the time is up, for effects that happen after a response. */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      await check()
      return
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

/** Request log lines ctxgate wrote (msg "request"), parsed. */
export function requestLogs(stack: Stack): Record<string, unknown>[] {
  return stack.logLines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry['msg'] === 'request')
}
