import type { IncomingHttpHeaders } from 'node:http'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { createLogger } from '../../src/log/logger.ts'
import { Calibration } from '../../src/calibration/calibration.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import type { PrepareResult } from '../../src/request/prepared.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { Json } from './conversations.ts'

export interface Rewriter {
  (body: Json, headers?: IncomingHttpHeaders): Promise<PrepareResult>
  readonly calibration: Calibration
  readonly store: MemorySessionStore
  /** The hook on exact bytes (formatting included). */
  readonly raw: (body: Buffer, headers?: IncomingHttpHeaders) => Promise<PrepareResult>
}

/** The real request-side pipeline (adapter, planner, session store) with a window of `window` tokens. */
export function createRewriter(format: WireFormat, window: number, overrides: DeepPartial<Config> = {}): Rewriter {
  const config = loadConfig({
    overrides: {
      models: [{ match: '*', window, budget: 1, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      ...overrides,
    } as DeepPartial<Config>,
  })
  const store = new MemorySessionStore(config.sessions)
  const calibration = new Calibration()
  const hook = createRewriteHook({
    config,
    store,
    calibration,
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
  })(format)
  if (!hook) throw new Error(`no rewrite hook for ${format}`)
  const rewrite = (body: Json, headers: IncomingHttpHeaders = {}) => hook(Buffer.from(JSON.stringify(body)), headers)
  return Object.assign(rewrite, {
    calibration,
    store,
    raw: (body: Buffer, headers: IncomingHttpHeaders = {}) => hook(body, headers),
  })
}

/** The body a forward result sends, parsed. */
export function sentBody(result: PrepareResult): Json {
  if (result.kind !== 'forward')
    throw new Error(`expected a forwarded request, got ${result.kind}: ${result.error.message}`)
  return JSON.parse(result.prepared.body.toString('utf8')) as Json
}

export function reportOf(result: PrepareResult): Record<string, unknown> {
  const log = result.kind === 'forward' ? result.prepared.log : result.log
  return (log?.['rewrite'] ?? {}) as Record<string, unknown>
}
