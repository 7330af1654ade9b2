import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { hashText, TextHasher } from '../../src/rewrite/hash.ts'
import { prefixSignatures } from '../../src/rewrite/prefix-break.ts'
import type { ChatView } from '../../src/rewrite/types.ts'

/** The signature as it was written before the one-walk version: the same text, hashed whole. */
function signatureAsBefore(view: ChatView, count: number): string {
  let text = ''
  for (let index = 0; index < count; index++) {
    const message = view.messages[index]
    text += `${message?.role}:${message?.tokens};`
  }
  return hashText(text)
}

const viewOf = (messages: { role: string; tokens: number }[]): ChatView =>
  ({ messages: messages.map((message) => ({ ...message })) }) as unknown as ChatView

describe('prefix signatures in one walk', () => {
  it('a hasher fed pieces digests to hashText of their concatenation, also between pieces', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 8 }), fc.nat(4), (pieces, seed) => {
        const hasher = new TextHasher(seed)
        let joined = ''
        for (const piece of pieces) {
          hasher.add(piece)
          joined += piece
          expect(hasher.digest()).toBe(hashText(joined, seed))
        }
        expect(hasher.digest()).toBe(hashText(joined, seed))
      }),
    )
  })

  it('give the signatures at the previous count and at the whole count that the old walk gave', () => {
    const message = fc.record({ role: fc.constantFrom('user', 'assistant'), tokens: fc.nat(100_000) })
    fc.assert(
      fc.property(fc.array(message, { maxLength: 40 }), fc.nat(45), (messages, previous) => {
        const view = viewOf(messages)
        const at = previous <= messages.length ? previous : undefined
        const { atPrevious, whole } = prefixSignatures(view, at, messages.length)
        expect(whole).toBe(signatureAsBefore(view, messages.length))
        expect(atPrevious).toBe(at === undefined ? undefined : signatureAsBefore(view, at))
      }),
    )
  })

  it('carried from recent walks, give what the old walk gave for conversations that grow, are edited and interleave', () => {
    const message = fc.record({ role: fc.constantFrom('user', 'assistant', 'system'), tokens: fc.nat(2_000) })
    // Each request: a conversation (of three), how many of its last messages the client edits, what it appends.
    const step = fc.record({
      conversation: fc.nat(2),
      edited: fc.nat(3),
      changedTokens: fc.nat(2_000),
      appended: fc.array(message, { maxLength: 4 }),
      previous: fc.nat(30),
    })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const conversations: { role: string; tokens: number }[][] = [[], [], []]
        for (const { conversation, edited, changedTokens, appended, previous } of steps) {
          const messages = conversations[conversation] as { role: string; tokens: number }[]
          const from = Math.max(0, messages.length - edited)
          if (from < messages.length)
            messages[from] = { ...(messages[from] as { role: string }), tokens: changedTokens }
          messages.push(...appended)
          const view = viewOf(messages)
          const at = previous <= messages.length ? previous : undefined
          const { atPrevious, whole } = prefixSignatures(view, at, messages.length)
          expect(whole).toBe(signatureAsBefore(view, messages.length))
          expect(atPrevious).toBe(at === undefined ? undefined : signatureAsBefore(view, at))
          // The previous count's signature alone, as detectPrefixBreak asks for it without the one walk.
          if (at !== undefined) expect(prefixSignatures(view, at, at).whole).toBe(signatureAsBefore(view, at))
        }
      }),
      { numRuns: 300 },
    )
  })
})
