import { describe, expect, it } from 'vitest'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { parseReusingElements } from '../../src/util/reuse-parsed-elements.ts'

/** A body as the parse memo hands it back: long messages are the same frozen objects request after request. */
const parsed = (body: unknown) => parseReusingElements(Buffer.from(JSON.stringify(body)))?.value ?? {}

describe('facts kept for re-sent messages', () => {
  it('a re-sent compaction block makes every request server-managed, and a message without one never does', () => {
    const estimator = new TokenEstimator()
    const compaction = {
      role: 'assistant',
      content: [{ type: 'compaction', content: 'summary of the earlier work '.repeat(10) }],
    }
    const plain = { role: 'user', content: [{ type: 'text', text: 'a long question '.repeat(20) }] }
    for (let request = 0; request < 3; request++) {
      const withCompaction = parsed({ model: 'claude-sonnet-4-5', messages: [plain, compaction, plain] })
      expect(Object.isFrozen((withCompaction['messages'] as unknown[])[1])).toBe(true)
      expect(anthropicMessagesAdapter.view(withCompaction, estimator).serverManaged).toBe(true)
      const without = parsed({ model: 'claude-sonnet-4-5', messages: [plain, plain] })
      expect(anthropicMessagesAdapter.view(without, estimator).serverManaged).toBeUndefined()
    }
  })
})
