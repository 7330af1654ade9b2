import type { IncomingHttpHeaders } from 'node:http'
import { describe, expect, it } from 'vitest'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import { createLogger } from '../../src/log/logger.ts'
import { Calibration } from '../../src/rewrite/calibration.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { agentFingerprint } from '../../src/providers/adapter-contract.ts'
import { createRewriteHook } from '../../src/routes/rewrite-hook.ts'
import { sessionKind } from '../../src/session/session-kind.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import { output, type Json } from '../helpers/conversations.ts'

const idleTtlMs = 3_600_000
const tokenA = 'tenant-a-token-0123456789'
const tokenB = 'tenant-b-token-0123456789'
const tools = [{ name: 'bash', description: 'Run a command.', input_schema: { type: 'object' } }]

/** A tool loop as an agent sends it: the task, then `rounds` rounds of one call and an 8,000-character result. */
function loop(rounds: number, task: string): Json {
  const messages: Json[] = [{ role: 'user', content: task }]
  for (let index = 0; index < rounds; index++) {
    const id = `toolu_${index}`
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'bash', input: { step: index } }] })
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: output('log', 8_000, index) }],
    })
  }
  return { model: 'claude-sonnet-4-5', max_tokens: 64, system: 'You are a careful agent.', tools, messages }
}

/** The rewrite hook with a memory store, both on a clock the test moves 30 s per request. */
function hookOnClock(overrides: DeepPartial<Config> = {}) {
  const clock = { now: 1_000_000 }
  const config = loadConfig({
    overrides: { economy: { startTokens: 10_000, shortSessionRequests: 4 }, ...overrides } as DeepPartial<Config>,
  })
  const store = new MemorySessionStore({ ...config.sessions, now: () => clock.now })
  const hook = createRewriteHook({
    config,
    store,
    calibration: new Calibration(),
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
    now: () => clock.now,
  })('anthropic-messages')
  if (!hook) throw new Error('no Anthropic hook')
  /** Sends a session's requests 1…`requests`; returns the economy's log of the last one. */
  const session = async (id: string, requests: number, headers: IncomingHttpHeaders = {}, body = loop) => {
    let log: Record<string, unknown> | undefined
    for (let rounds = 1; rounds <= requests; rounds++) {
      clock.now += 30_000
      const result = await hook(Buffer.from(JSON.stringify(body(rounds, `Task ${id}: fix the failing test.`))), {
        'x-ctxgate-session': id,
        ...headers,
      })
      log = result.kind === 'forward' ? result.prepared.log : result.log
    }
    return { batch: log?.['batch'] as { reason: string } | undefined, waited: log?.['economy'] }
  }
  return { clock, store, session, idle: () => (clock.now += idleTtlMs + 1) }
}

// With nothing known, a session at request 12 expects 12 more (its own Lindy estimate), enough for a batch to pay back.
const decisionAt = 12

describe('finished sessions of the same kind in the economy’s decision', () => {
  it('batches at request 12 on the session’s own estimate, and waits once 5 sessions of its kind ended at 13', async () => {
    const fresh = hookOnClock()
    expect((await fresh.session('alone', decisionAt)).batch).toMatchObject({ reason: 'pays_back' })

    const { store, session, idle } = hookOnClock()
    for (let index = 0; index < 5; index++) await session(`done-${index}`, decisionAt + 1)
    idle()
    const next = await session('next', decisionAt)
    // Every finished session of its kind had exactly one request left at this point: one more request cannot pay back a rewrite.
    expect(next).toEqual({ batch: undefined, waited: 'waiting_pays_more' })
    const kind = sessionKind('shared', 'claude-sonnet-4-5', agentFingerprint(tools, ['You are a careful agent.']))
    expect(await store.finishedLengths(kind)).toEqual([13, 13, 13, 13, 13])
  })

  it('does not let one tenant’s finished sessions change another tenant’s decision', async () => {
    const { session, idle } = hookOnClock({
      auth: { tokens: [tokenA, tokenB] },
      metrics: { token: 'admin-token-0123456789' },
    })
    for (let index = 0; index < 5; index++) await session(`done-${index}`, decisionAt + 1, { 'x-ctxgate-auth': tokenA })
    idle()
    expect(await session('a-next', decisionAt, { 'x-ctxgate-auth': tokenA })).toEqual({
      batch: undefined,
      waited: 'waiting_pays_more',
    })
    expect((await session('b-next', decisionAt, { 'x-ctxgate-auth': tokenB })).batch).toMatchObject({
      reason: 'pays_back',
    })
  })

  it('does not count another agent’s sessions (other tools) or another model family’s', async () => {
    const { session, idle } = hookOnClock()
    const otherTools = (rounds: number, task: string): Json => ({
      ...loop(rounds, task),
      tools: [...tools, { name: 'read_file', input_schema: { type: 'object' } }],
    })
    const otherModel = (rounds: number, task: string): Json => ({ ...loop(rounds, task), model: 'claude-opus-4-5' })
    for (let index = 0; index < 5; index++) {
      await session(`tools-${index}`, decisionAt + 1, {}, otherTools)
      await session(`model-${index}`, decisionAt + 1, {}, otherModel)
    }
    idle()
    expect((await session('next', decisionAt)).batch).toMatchObject({ reason: 'pays_back' })
  })
})
