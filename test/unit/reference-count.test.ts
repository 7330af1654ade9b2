import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { createLogger } from '../../src/log/logger.ts'
import { Calibration, type ConversationRequest } from '../../src/calibration/calibration.ts'
import { TokenEstimator, type ExactCounters } from '../../src/rewrite/estimate.ts'
import { createRewriteHook } from '../../src/forward/rewrite-hook/hook.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { promptTokens } from '../../src/rewrite/prompt-tokens.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'

/** A calibration that remembers how each request was sized. */
class Watched extends Calibration {
  readonly sized: ConversationRequest[] = []
  override factor(model: string, conversation?: ConversationRequest, scope?: string): number {
    if (conversation) this.sized.push(conversation)
    return super.factor(model, conversation, scope)
  }
}

/** A reference "vocabulary" of one token per 5 characters: easy to compute by hand, unlike the estimate. */
const byFive = (text: string): number => Math.ceil(text.length / 5)

function hookWith(reference: (() => ((text: string) => number) | undefined) | undefined, format: WireFormat) {
  const config = loadConfig({
    overrides: {
      models: [{ match: '*', window: 200_000, budget: 1, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
    },
  })
  const counters: ExactCounters = {
    counterFor: (model) => (model.startsWith('gpt-4o') ? byFive : undefined),
    ready: () => Promise.resolve(),
    ...(reference ? { reference } : {}),
  }
  const calibration = new Watched()
  const hook = createRewriteHook({
    config,
    store: new MemorySessionStore(config.sessions),
    calibration,
    estimator: new TokenEstimator(counters),
    logger: createLogger('silent'),
  })(format)
  if (!hook) throw new Error('no hook')
  return { hook, calibration }
}

const messages = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  system: 'You are a coding agent that reads files before changing them.',
  messages: [
    { role: 'user', content: 'Read src/app.ts and say what it exports, one line per export, please.' },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/app.ts' } }],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'export const app = createApp()\n'.repeat(40) },
      ],
    },
  ],
}

describe('the reference vocabulary’s count of each request', () => {
  it('reaches the calibration beside the estimate, counted over the same view of the prompt', async () => {
    const { hook, calibration } = hookWith(() => byFive, 'anthropic-messages')
    const result = await hook(Buffer.from(JSON.stringify(messages)), {})
    expect(result.kind).toBe('forward')
    const sized = calibration.sized[0] as ConversationRequest
    const expected = promptTokens(anthropicMessagesAdapter.view(messages, new TokenEstimator(undefined, byFive)))
    expect(sized.reference).toBe(expected)
    // A different count from the estimate's: the calibration gets both.
    expect(sized.reference).not.toBe(sized.unedited)
  })

  it('is left out until the vocabulary is loaded, so the prior sizes new content meanwhile', async () => {
    const { hook, calibration } = hookWith(() => undefined, 'anthropic-messages')
    await hook(Buffer.from(JSON.stringify(messages)), {})
    expect(calibration.sized[0]).not.toHaveProperty('reference')
  })

  it('waits for the vocabulary on the first request that needs it, so every request is counted by it', async () => {
    let loaded = false
    const config = loadConfig({
      overrides: {
        models: [{ match: '*', window: 200_000, budget: 1, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      },
    })
    const calibration = new Watched()
    const hook = createRewriteHook({
      config,
      store: new MemorySessionStore(config.sessions),
      calibration,
      estimator: new TokenEstimator({
        counterFor: () => undefined,
        ready: () => Promise.resolve(),
        reference: () => (loaded ? byFive : undefined),
        loadReference: () => new Promise<void>((resolve) => setTimeout(() => resolve(void (loaded = true)), 20)),
      }),
      logger: createLogger('silent'),
    })('anthropic-messages')
    await hook?.(Buffer.from(JSON.stringify(messages)), {})
    expect(calibration.sized[0]?.reference).toBeGreaterThan(0)
  })

  it('is the exact count itself for a model whose vocabulary is public', async () => {
    let asked = 0
    const { hook, calibration } = hookWith(() => {
      asked++
      return byFive
    }, 'openai-chat')
    const body = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are a coding agent that reads files before changing them.' },
        { role: 'user', content: 'Read src/app.ts and say what it exports, one line per export, please.' },
      ],
    }
    await hook(Buffer.from(JSON.stringify(body)), {})
    const sized = calibration.sized[0] as ConversationRequest
    expect(sized.reference).toBe(sized.unedited)
    expect(asked).toBe(0)
  })

  it('is counted after dispatch for a request sent before it is planned, and before dispatch for one planned first', async () => {
    let counted = 0
    const counting = (text: string): number => {
      counted++
      return byFive(text)
    }
    const { hook } = hookWith(() => counting, 'anthropic-messages')
    // Short, no tool call or result: the hook sends it first and plans it with its records.
    const short = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] }
    const sent = await hook(Buffer.from(JSON.stringify(short)), {}, { recordsAfterDispatch: true })
    if (sent.kind !== 'forward' || !sent.prepared.afterDispatch)
      throw new Error('expected a request sent before planning')
    expect(counted).toBe(0)
    await sent.prepared.afterDispatch()
    // The plan made with the records sizes it by the count.
    expect(counted).toBeGreaterThan(0)

    // With a tool round it is planned before it leaves: the count is made first.
    counted = 0
    await hook(Buffer.from(JSON.stringify(messages)), {}, { recordsAfterDispatch: true })
    expect(counted).toBeGreaterThan(0)
  })
})
