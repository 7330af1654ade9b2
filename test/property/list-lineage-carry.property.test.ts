import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { hashText } from '../../src/rewrite/hash.ts'
import { prefixSignatures } from '../../src/rewrite/prefix-break.ts'
import { messagesTokens, noteMessagesTokens, promptTokens, tailWithin } from '../../src/rewrite/prompt-tokens.ts'
import type { ChatView, MessageView } from '../../src/rewrite/types.ts'
import { noteSharedStart, sharedStartOf } from '../../src/util/list-lineage.ts'
import { parseKeepingNumbers } from '../../src/util/exact-numbers.ts'

/**
 * The carries that follow a body's messages from the parse (list-lineage.ts): the message views, the
 * compaction check and the token totals (providers/anthropic/message-views.ts) and the prefix
 * signatures' walk (prefix-break.ts), against the same computed afresh from JSON.parse of the text
 * (objects the parse never saw, so nothing is carried or memoised), on conversations a client grows,
 * edits, truncates, restarts and interleaves.
 */

const longText = (seed: string) => fc.nat(40).map((extra) => `${seed} `.repeat(30 + extra))
const shortText = fc.constantFrom('ok', 'go on', 'Refactor it.')
let ids = 0
const message = fc.oneof(
  fc.record({ role: fc.constant('user'), content: fc.oneof(shortText, longText('user says')) }),
  fc.tuple(fc.nat(5), longText('result')).map(([tool, content]) => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: `toolu_${tool}`, content }],
  })),
  fc.tuple(fc.nat(5), shortText, fc.boolean()).map(([tool, text, long]) => ({
    role: 'assistant',
    content: [
      { type: 'text', text: long ? `${text} `.repeat(40) : text },
      { type: 'tool_use', id: `toolu_${tool}`, name: 'read_file', input: { path: `f${ids++ % 7}.ts` } },
    ],
  })),
  // A compaction block, in a message long enough to be frozen by the parse or short enough not to be.
  fc.boolean().map((long) => ({
    role: 'assistant',
    content: [{ type: 'compaction', content: long ? 'summary '.repeat(40) : 'summary' }],
  })),
)

type Message = Record<string, unknown>
const step = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), messages: fc.array(message, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('edit' as const), back: fc.nat(4), replacement: message }),
  fc.record({ kind: fc.constant('truncate' as const), count: fc.nat(4) }),
  fc.record({ kind: fc.constant('conversation' as const), which: fc.nat(2) }),
  fc.record({ kind: fc.constant('user-id' as const), id: fc.constantFrom('a', 'b') }),
  fc.record({ kind: fc.constant('same' as const) }),
)

/** Every field of a view that is not a getter, and the getters' values. */
function plain(view: MessageView): unknown {
  return {
    role: view.role,
    tokens: view.tokens,
    hash: view.hash,
    startsUserTurn: view.startsUserTurn,
    toolCallIds: view.toolCallIds,
    toolCallNames: view.toolCallNames,
    toolCallInputs: view.toolCallInputs,
    toolCallClearable: view.toolCallClearable,
    hasThinking: view.hasThinking,
    toolResults: view.toolResults.map((result) => ({
      id: result.id,
      message: result.message,
      tokens: result.tokens,
      text: result.text,
      hash: result.hash,
    })),
  }
}

function signatureAfresh(view: ChatView, count: number): string {
  let text = ''
  for (let index = 0; index < count; index++) {
    const one = view.messages[index]
    text += `${one?.role}:${one?.tokens};`
  }
  return hashText(text)
}

describe('carries that follow the messages from the parse', () => {
  it('give the views, compaction check, token totals and prefix signatures computed afresh, for any sequence of bodies', () => {
    const estimators = [new TokenEstimator(), new TokenEstimator()]
    let carried = 0
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 6 }),
        fc.array(fc.tuple(step, fc.nat(40), fc.nat(1)), { minLength: 1, maxLength: 12 }),
        (start, steps) => {
          const conversations: Message[][] = [[...start], [...start], []]
          let current = 0
          let userId = 'a'
          for (const [next, count, which] of steps) {
            let messages = conversations[current] as Message[]
            if (next.kind === 'append') messages = [...messages, ...next.messages]
            else if (next.kind === 'edit' && messages.length > 0)
              messages = messages.map((one, index) =>
                index === Math.max(0, messages.length - 1 - next.back) ? next.replacement : one,
              )
            else if (next.kind === 'truncate') messages = messages.slice(0, Math.max(0, messages.length - next.count))
            else if (next.kind === 'conversation') current = next.which
            else if (next.kind === 'user-id') userId = next.id
            conversations[current] = messages
            const text = JSON.stringify({
              model: 'claude-sonnet-4-5',
              max_tokens: 64,
              metadata: { user_id: userId },
              messages: conversations[current],
            })
            const estimator = estimators[which] as TokenEstimator
            const json = parseKeepingNumbers(Buffer.from(text)).value as Record<string, unknown>
            const view = anthropicMessagesAdapter.view(json, estimator)
            const afresh = anthropicMessagesAdapter.view(JSON.parse(text) as Record<string, unknown>, estimator)
            if ((sharedStartOf(view.messages)?.shared ?? 0) > 0) carried++
            expect(view.messages.map(plain)).toEqual(afresh.messages.map(plain))
            expect(view.serverManaged).toBe(afresh.serverManaged)
            expect(view.headTokens).toBe(afresh.headTokens)
            const sum = afresh.messages.reduce((total, one) => total + one.tokens, 0)
            expect(messagesTokens(view.messages)).toBe(sum)
            expect(promptTokens(view)).toBe(
              afresh.messages.reduce((total, one) => total + one.tokens, afresh.headTokens),
            )
            const upTo = Math.min(count, view.messages.length)
            const at = Math.min(Math.floor(count / 2), upTo)
            const signatures = prefixSignatures(view, at, upTo)
            expect(signatures.whole).toBe(signatureAfresh(afresh, upTo))
            expect(signatures.atPrevious).toBe(signatureAfresh(afresh, at))
            const whole = prefixSignatures(view, undefined, view.messages.length)
            expect(whole.whole).toBe(signatureAfresh(afresh, afresh.messages.length))
          }
        },
      ),
      { numRuns: 300 },
    )
    // The carry ran (the comparisons above are not all of fresh walks).
    expect(carried).toBeGreaterThan(100)
  })

  it('prevents a walk found whole for a shorter count from lending more messages than it was found to share', () => {
    const views = (roles: string[]): ChatView =>
      ({ headTokens: 0, messages: roles.map((role) => ({ role, tokens: 1 })) }) as unknown as ChatView
    // A walk over a, b, c, d; then a list that shares its first two (and no more) asked for those two only.
    prefixSignatures(views(['user', 'assistant', 'user', 'assistant']), undefined, 4)
    const second = views(['user', 'assistant', 'assistant', 'user'])
    prefixSignatures(second, undefined, 2)
    // A list built from the second (its first four the same): only the first two are the kept walk's.
    const third = views(['user', 'assistant', 'assistant', 'user', 'user'])
    noteSharedStart(third.messages, second.messages, 4)
    expect(prefixSignatures(third, undefined, 5).whole).toBe(signatureAfresh(third, 5))
  })
})

describe('the tail within a budget', () => {
  /** The walk as it was: from the newest message back until the tail is over the tokens. */
  function tailWalked(tokens: readonly number[], limit: number): number {
    let tail = 0
    for (let index = tokens.length - 1; index >= 0; index--) {
      tail += tokens[index] as number
      if (tail > limit) return index + 1
    }
    return 0
  }

  it('prevents the carried total from changing where the tail starts: the same as the walk, total noted or not', () => {
    // The limit anywhere, or a fraction of a token either side of the total (where the shortcut decides).
    const limitOf = fc.oneof(
      fc.nat(180_000).map((thirds) => () => thirds / 3),
      fc.integer({ min: -6, max: 6 }).map((halves) => (total: number) => total + halves / 2),
    )
    fc.assert(
      fc.property(fc.array(fc.nat(5_000), { maxLength: 30 }), limitOf, fc.boolean(), (tokens, limitFor, noted) => {
        const messages = tokens.map((count) => ({ tokens: count }))
        const total = tokens.reduce((sum, count) => sum + count, 0)
        const limit = limitFor(total)
        if (noted) noteMessagesTokens(messages, total)
        const view = { messages } as unknown as ChatView
        expect(tailWithin(view, limit)).toBe(tailWalked(tokens, limit))
      }),
      { numRuns: 500 },
    )
  })
})
