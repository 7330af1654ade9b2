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
  it('prevents holding a large body twice: no decoded copy of the body is kept, the splice reads its bytes', async () => {
    const filler = 'a re-sent tool result — ü '.repeat(200)
    const responses = requestOf('openai-responses', { model: 'gpt-4.1', input: [{ role: 'user', content: filler }] })
    const messages = requestOf('anthropic-messages', {
      model: 'claude-sonnet-5',
      max_tokens: 10,
      messages: [{ role: 'user', content: filler }],
    })
    for (const request of [responses, messages]) {
      const read = await readChat(request)
      if (read.kind !== 'chat') throw new Error('expected a chat')
      const bodyLong = Object.values(read.chat).filter(
        (value) => typeof value === 'string' && value.length > filler.length,
      )
      expect(bodyLong).toEqual([])
      expect(read.chat.members?.length ?? 0).toBeGreaterThan(0)
    }
  })
})
