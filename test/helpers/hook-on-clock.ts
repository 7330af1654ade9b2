import type { IncomingHttpHeaders } from 'node:http'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { createLogger } from '../../src/log/logger.ts'
import { Calibration } from '../../src/calibration/calibration.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import type { SessionStore } from '../../src/session/session-store.ts'
import { output, type Json } from './conversations.ts'

export const agentTools = [{ name: 'bash', description: 'Run a command.', input_schema: { type: 'object' } }]
export const agentSystem = 'You are a careful agent.'

/** The messages of a tool loop as an agent sends them: the task, then `rounds` rounds of one call and an 8,000-character result. */
export function toolLoopMessages(rounds: number, task: string): Json[] {
  const messages: Json[] = [{ role: 'user', content: task }]
  for (let index = 0; index < rounds; index++) {
    const id = `toolu_${index}`
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'bash', input: { step: index } }] })
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: output('log', 8_000, index) }],
    })
  }
  return messages
}

/** That tool loop as a whole request body. */
export function agentLoop(rounds: number, task: string): Json {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    system: agentSystem,
    tools: agentTools,
    messages: toolLoopMessages(rounds, task),
  }
}

/** The economy's verdict on a request, from its log line. */
export interface EconomyVerdict {
  readonly batch: { readonly reason: string } | undefined
  readonly waited: unknown
}

export interface Clock {
  now: number
}

/**
 * The Anthropic rewrite hook (economy starting at 10k tokens and 4 requests) and its store on a
 * clock the test moves: 30 s per request, `idle()` past the idle TTL. A memory store unless given one.
 */
export function hookOnClock(
  options: {
    readonly overrides?: DeepPartial<Config>
    readonly clock?: Clock
    readonly store?: (config: Config, clock: Clock) => SessionStore
  } = {},
) {
  const clock = options.clock ?? { now: 1_000_000 }
  const config = loadConfig({
    overrides: {
      economy: { startTokens: 10_000, shortSessionRequests: 4 },
      ...options.overrides,
    } as DeepPartial<Config>,
  })
  const store = options.store?.(config, clock) ?? new MemorySessionStore({ ...config.sessions, now: () => clock.now })
  const hook = createRewriteHook({
    config,
    store,
    calibration: new Calibration(),
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
    now: () => clock.now,
  })('anthropic-messages')
  if (!hook) throw new Error('no Anthropic hook')
  /** Sends a session's requests 1…`requests`; returns the economy's verdict on the last one. */
  const session = async (
    id: string,
    requests: number,
    headers: IncomingHttpHeaders = {},
    body = agentLoop,
  ): Promise<EconomyVerdict> => {
    let log: Record<string, unknown> | undefined
    for (let rounds = 1; rounds <= requests; rounds++) {
      clock.now += 30_000
      const result = await hook(Buffer.from(JSON.stringify(body(rounds, `Task ${id}: fix the failing test.`))), {
        'x-ctxgate-session': id,
        ...headers,
      })
      log = result.kind === 'forward' ? result.prepared.log : result.log
    }
    return { batch: log?.['batch'] as EconomyVerdict['batch'], waited: log?.['economy'] }
  }
  return { clock, store, session, idle: () => (clock.now += config.sessions.idleTtlMs + 1) }
}
