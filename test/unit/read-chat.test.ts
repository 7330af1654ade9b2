import { describe, expect, it } from 'vitest'
import { Calibration } from '../../src/calibration/calibration.ts'
import { loadConfig, type DeepPartial } from '../../src/config/load-config.ts'
import type { Config } from '../../src/config/schema.ts'
import type { HookRequest } from '../../src/forward/rewrite-hook/hook-request.ts'
import { readChat } from '../../src/forward/rewrite-hook/read-chat.ts'
import { createLogger } from '../../src/log/logger.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import { chatFormat } from '../../src/providers/registry.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { MemorySessionStore } from '../../src/session/memory-store.ts'

const models = [{ match: '*', window: 200_000, budget: 1, minCacheableTokens: 1024, thinkingBoundToPrefix: false }]

function requestOf(wire: WireFormat, body: unknown): HookRequest {
  const config = loadConfig({ overrides: { models } as DeepPartial<Config> })
  const format = chatFormat(wire)
  if (!format) throw new Error(`no format ${wire}`)
  const deps = {
    config,
    store: new MemorySessionStore(config.sessions),
    calibration: new Calibration(),
    estimator: new TokenEstimator(),
    logger: createLogger('silent'),
  }
  return { deps, format, wire, original: Buffer.from(JSON.stringify(body)), incoming: {}, isRefit: false }
}

describe('reading a chat body', () => {
  it('prevents holding a large body twice: the decoded text is kept only for an adapter that splices its edits into it', async () => {
    const responses = requestOf('openai-responses', { model: 'gpt-4.1', input: [{ role: 'user', content: 'hi' }] })
    const messages = requestOf('anthropic-messages', {
      model: 'claude-sonnet-5',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const [read, spliced] = [await readChat(responses), await readChat(messages)]
    if (read.kind !== 'chat' || spliced.kind !== 'chat') throw new Error('expected chats')
    expect(responses.format.adapter.copiesOnWrite).not.toBe(true)
    expect(read.chat.text).toBe('')
    expect(read.chat.json['model']).toBe('gpt-4.1')
    expect(spliced.chat.text).toBe(messages.original.toString('utf8'))
  })
})
