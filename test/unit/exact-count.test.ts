import fc from 'fast-check'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { beforeAll, describe, expect, it } from 'vitest'
import { openaiChatAdapter } from '../../src/providers/openai/chat-adapter.ts'
import { exactCounter, openaiExactCounters } from '../../src/providers/openai/tokenizer/exact-counters.ts'
import { countWithRunGuard } from '../../src/providers/openai/tokenizer/long-run-guard.ts'
import { openaiEncodingOf } from '../../src/providers/openai/tokenizer/openai-encoding.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'

const estimator = new TokenEstimator(openaiExactCounters)
let o200k: (text: string) => number
/** The library itself, without ctxgate's guard. */
const unguarded = (text: string): number => countTokens(text, { disallowedSpecial: new Set() })

beforeAll(async () => {
  await estimator.ready('gpt-4o')
  const counter = exactCounter('o200k_base')
  if (!counter) throw new Error('gpt-tokenizer did not load')
  o200k = counter
})

describe('which vocabulary a model counts in', () => {
  it('maps OpenAI model names the way tiktoken does, and others to none', () => {
    expect(openaiEncodingOf('gpt-4o-2024-08-06')).toBe('o200k_base')
    expect(openaiEncodingOf('gpt-4.1-mini')).toBe('o200k_base')
    expect(openaiEncodingOf('gpt-5-codex')).toBe('o200k_base')
    expect(openaiEncodingOf('o3')).toBe('o200k_base')
    expect(openaiEncodingOf('o4-mini')).toBe('o200k_base')
    expect(openaiEncodingOf('openai/gpt-oss-120b')).toBe('o200k_base')
    expect(openaiEncodingOf('gpt-4-0613')).toBe('cl100k_base')
    expect(openaiEncodingOf('gpt-3.5-turbo')).toBe('cl100k_base')
    expect(openaiEncodingOf('claude-sonnet-4-5')).toBeUndefined()
    expect(openaiEncodingOf('o1000-model')).toBeUndefined()
  })
})

describe('exact o200k counts', () => {
  // Token ids for these strings are in tiktoken's published test plans (shipped as gpt-tokenizer's data/TestPlans.txt).
  it.each([
    ['hello', 1],
    ['a a', 2],
    ['Hello, World! How are you today? 🌍', 11],
    ['こんにちは、世界！お元気ですか？', 10],
    ['Привет, мир! Как дела?', 8],
    ['The quick brown fox jumps over 13 lazy dogs. 😺', 13],
    ['A journey of a thousand miles begins with a single step. - Lao Tzu', 16],
  ])('%s is %i tokens', (text, tokens) => {
    expect(estimator.forModel('gpt-4o').text(text)).toBe(tokens)
  })

  it('counts text with special-token spellings as ordinary text instead of throwing', () => {
    expect(o200k('a <|endoftext|> b')).toBeGreaterThan(3)
  })

  it('is memoised per string and gives the same count on every call', () => {
    const text = 'const value = await store.get(id, { retry: 3 }) // reading the next file\n'.repeat(40)
    const exact = estimator.forModel('gpt-5')
    expect(exact.text(text)).toBe(o200k(text))
    expect(exact.text(text)).toBe(o200k(text))
    expect(exact.exact).toBe(true)
  })

  it('leaves models without a public tokenizer on the estimate', () => {
    const claude = estimator.forModel('claude-sonnet-4-5')
    expect(claude).toBe(estimator)
    expect(claude.exact).toBe(false)
  })
})

describe('the wire overhead of a Chat Completions prompt', () => {
  // OpenAI cookbook "How to count tokens with tiktoken": 3 tokens per message (+ its role), 3 priming the reply.
  // The totals are the API's own prompt_tokens for these messages, recorded in gpt-tokenizer's functionCallingTestCases.
  it.each([
    [
      'system',
      'You are a helpful, pattern-following assistant that translates corporate jargon into plain English.',
      24,
    ],
    ['user', "This late pivot means we don't have time to boil the ocean for the client deliverable.", 25],
  ])('a lone %s message counts as the API counted it', (role, content, promptTokens) => {
    const view = openaiChatAdapter.view(
      { model: 'gpt-4o', messages: [{ role, content }] },
      estimator.forModel('gpt-4o'),
    )
    expect(view.messages.reduce((sum, message) => sum + message.tokens, view.headTokens)).toBe(promptTokens)
  })
})

describe('the long-run guard', () => {
  it('counts runs BPE would take quadratic time over in chunks, close to the whole count', () => {
    for (const text of ['a'.repeat(1_500), '-'.repeat(1_500), ' '.repeat(1_500) + 'x', '中'.repeat(1_500)]) {
      const guarded = countWithRunGuard(text, unguarded)
      // Each cut costs at most a token or so against counting the whole run at once.
      const cuts = Math.ceil(text.length / 256)
      expect(Math.abs(guarded - unguarded(text))).toBeLessThanOrEqual(cuts)
    }
  })

  it('finishes a 100k-character run of one letter (unguarded, this takes seconds)', () => {
    expect(o200k('a'.repeat(100_000))).toBeGreaterThan(1_000)
  })

  it('never splits a surrogate pair, and equals the library count on text without long runs', () => {
    const emoji = '😺'.repeat(600)
    expect(countWithRunGuard(emoji, (piece) => (piece.match(/\uFFFD/g) ? -1 : [...piece].length))).toBe(600)
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('word ', 'x1 ', '{"k": 2}\n', 'é', '中文', '  '), { maxLength: 100 }),
        (parts) => {
          const text = parts.join('')
          expect(o200k(text)).toBe(unguarded(text))
        },
      ),
      { numRuns: 50 },
    )
  })
})
