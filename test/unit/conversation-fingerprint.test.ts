import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { conversationFingerprint } from '../../src/providers/adapter-contract.ts'
import type { ChatView } from '../../src/rewrite/types.ts'

const viewOf = (model: string, headTokens: number): ChatView => ({
  model,
  headTokens,
  messages: [],
  maxOutputTokens: 0,
})
const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}
const firstMessage = fc.record({
  role: fc.constant('user'),
  content: fc.oneof(
    fc.string(),
    fc.array(fc.record({ type: fc.constant('text'), text: fc.string() }), { maxLength: 3 }),
  ),
})

describe('the conversation fingerprint', () => {
  it('prevents a remembered fingerprint from going stale: a frozen first message gives what a fresh copy gives, for any model and head size', () => {
    fc.assert(
      fc.property(
        firstMessage,
        fc.array(fc.tuple(fc.constantFrom('m1', 'm2'), fc.nat(50)), { minLength: 1, maxLength: 6 }),
        (message, views) => {
          const frozen = deepFreeze(structuredClone(message))
          for (const [model, head] of views) {
            const fresh = conversationFingerprint(viewOf(model, head), structuredClone(message))
            expect(conversationFingerprint(viewOf(model, head), frozen)).toBe(fresh)
          }
        },
      ),
    )
  })

  it('tells apart first messages, models and head sizes', () => {
    const first = deepFreeze({ role: 'user', content: 'Refactor the billing module.' })
    const other = deepFreeze({ role: 'user', content: 'Refactor the billing module!' })
    const seen = new Set([
      conversationFingerprint(viewOf('m1', 10), first),
      conversationFingerprint(viewOf('m1', 11), first),
      conversationFingerprint(viewOf('m2', 10), first),
      conversationFingerprint(viewOf('m1', 10), other),
    ])
    expect(seen.size).toBe(4)
  })
})
