import Anthropic from '@anthropic-ai/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import type { CacheWrites } from '../../src/mock/prompt-cache.ts'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'

const servers: MockServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const marked = { cache_control: { type: 'ephemeral' as const } }
const turn = (label: string, mark = false): Anthropic.TextBlockParam => ({
  type: 'text',
  text: `${label}: ${'several words of a long enough turn '.repeat(20)}`,
  ...(mark ? marked : {}),
})

/**
 * Three requests of one conversation: the first marks its tail; the second grows it and also marks
 * the first turn (inside the prefix it reads); the third edits everything after the first turn.
 */
async function thirdRequestUnder(writes: CacheWrites): Promise<Anthropic.Usage> {
  const mock = await startMockServer({ minCacheableTokens: 1, cacheWrites: writes })
  servers.push(mock)
  const client = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0 })
  const send = (content: Anthropic.TextBlockParam[]) =>
    client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1, messages: [{ role: 'user', content }] })
  await send([turn('one'), turn('two', true)])
  await send([turn('one', true), turn('two'), turn('three', true)])
  return (await send([turn('one', true), turn('two, edited'), turn('three', true)])).usage
}

describe('ctxgate mock --cache-writes', () => {
  it('literal: the marker inside the read prefix wrote an entry, so the edited request reads up to it', async () => {
    const usage = await thirdRequestUnder('literal')
    expect(usage.cache_read_input_tokens).toBeGreaterThan(0)
  })

  it('strict: the same marker wrote nothing, so the edited request writes everything again', async () => {
    const literal = await thirdRequestUnder('literal')
    const strict = await thirdRequestUnder('strict')
    expect(strict.cache_read_input_tokens).toBe(0)
    expect(strict.cache_creation_input_tokens).toBe(
      (literal.cache_creation_input_tokens ?? 0) + (literal.cache_read_input_tokens ?? 0),
    )
  })
})
