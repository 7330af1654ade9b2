import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { anthropicMessages, type DiagnosisContext } from '../../src/mock/anthropic-messages.ts'
import { fingerprintOf, PromptFingerprints, type PromptFingerprint } from '../../src/mock/cache-diagnosis.ts'
import { AnthropicPromptCache, type PromptBlock } from '../../src/mock/prompt-cache.ts'
import type { MockOptions } from '../../src/mock/types.ts'

const beta = 'cache-diagnosis-2026-04-07'
const options: MockOptions = {
  windowFor: () => 200_000,
  minCacheableFor: () => 100,
  replyText: (sequence) => `Reply ${sequence}.`,
}

/** Two tools, one system block, then messages; the last block carries the breakpoint. */
function prompt(keys: readonly string[], tokens = 50): PromptBlock[] {
  return keys.map((key, index) => ({
    key,
    tokens,
    ...(index === keys.length - 1 ? { breakpoint: '5m' as const } : {}),
  }))
}
const head = ['tool-a', 'tool-b', 'system']
const print = (keys: readonly string[], model = 'm', toolCount = 2): PromptFingerprint =>
  fingerprintOf(model, prompt(keys), { toolCount, systemCount: 1 }, 100)

function remembered(keys: readonly string[]): PromptFingerprints {
  const fingerprints = new PromptFingerprints()
  fingerprints.remember('msg_1', print(keys))
  return fingerprints
}

describe('the mock remembers prompts per message id and names the first part that changed', () => {
  const before = [...head, 'user-1', 'assistant-1', 'user-2']

  it('finds nothing when the new prompt extends the old one', () => {
    expect(remembered(before).diagnose('msg_1', print([...before, 'assistant-2', 'user-3']))).toBeNull()
  })

  it('names the model, tools, system or messages, with the cached tokens missed', () => {
    const diagnose = (keys: readonly string[], model = 'm', tools = 2) =>
      remembered(before).diagnose('msg_1', print(keys, model, tools))
    expect(diagnose(before, 'other-model')).toEqual({
      cache_miss_reason: { type: 'model_changed', cache_missed_input_tokens: 300 },
    })
    expect(diagnose(['tool-a', 'tool-c', ...before.slice(2)])).toEqual({
      cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: 250 },
    })
    expect(diagnose(['tool-a', 'tool-b', 'tool-c', ...before.slice(2)], 'm', 3)).toMatchObject({
      cache_miss_reason: { type: 'tools_changed' },
    })
    expect(diagnose(['tool-a', 'tool-b', 'new system', ...before.slice(3)])).toEqual({
      cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 200 },
    })
    expect(diagnose([...head, 'user-1', 'assistant-1 edited', 'user-2'])).toEqual({
      cache_miss_reason: { type: 'messages_changed', cache_missed_input_tokens: 100 },
    })
  })

  it('reports an id it never answered, or has forgotten, as not found', () => {
    const fingerprints = new PromptFingerprints(2)
    for (const id of ['msg_1', 'msg_2', 'msg_3']) fingerprints.remember(id, print(before))
    const notFound = { cache_miss_reason: { type: 'previous_message_not_found' } }
    expect(fingerprints.diagnose('msg_1', print(before))).toEqual(notFound)
    expect(fingerprints.diagnose('msg_9', print(before))).toEqual(notFound)
    expect(fingerprints.diagnose('msg_3', print(before))).toBeNull()
  })

  it('misses exactly the cached tokens after the first changed message block, whichever it is', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.nat(), (count, pick) => {
        const messages = Array.from({ length: count }, (_, index) => `message-${index}`)
        const changed = pick % count
        const edited = messages.map((key, index) => (index === changed ? `${key} edited` : key))
        const diagnosis = remembered([...head, ...messages]).diagnose('msg_1', print([...head, ...edited, 'more']))
        expect(diagnosis).toEqual({
          cache_miss_reason: { type: 'messages_changed', cache_missed_input_tokens: (count - changed) * 50 },
        })
      }),
    )
  })
})

describe('the mock answering the cache-diagnosis beta', () => {
  const request = (extra: Record<string, unknown> = {}) => ({
    model: 'claude-sonnet-5',
    max_tokens: 32,
    system: 'You are terse.',
    messages: [{ role: 'user', content: 'word '.repeat(200) }],
    cache_control: { type: 'ephemeral' },
    ...extra,
  })
  const answer = (
    body: unknown,
    headers: Record<string, string>,
    sequence: number,
    fingerprints = new PromptFingerprints(),
  ) => {
    const context: DiagnosisContext = { headers, fingerprints }
    return anthropicMessages(body, options, new AnthropicPromptCache(() => 0), 'text', sequence, context)
  }

  it('answers byte for byte as before unless the client sent both the beta and the field', () => {
    const plain = JSON.stringify(answer(request(), {}, 1))
    expect(JSON.stringify(answer(request({ diagnostics: { previous_message_id: null } }), {}, 1))).toBe(plain)
    expect(JSON.stringify(answer(request(), { 'anthropic-beta': beta }, 1))).toBe(plain)
    const streamed = JSON.stringify(answer(request({ stream: true }), {}, 1))
    expect(JSON.stringify(answer(request({ stream: true, diagnostics: {} }), {}, 1))).toBe(streamed)
    expect(plain).not.toContain('diagnostics')
  })

  it('diagnoses against the message it named, in the JSON answer and on message_start', () => {
    const fingerprints = new PromptFingerprints()
    const headers = { 'anthropic-beta': beta }
    const first = answer(request({ diagnostics: { previous_message_id: null } }), headers, 1, fingerprints)
    expect(first).toMatchObject({ json: { id: 'msg_mock_1', diagnostics: null } })
    const changed = request({
      system: 'You are verbose.',
      stream: true,
      diagnostics: { previous_message_id: 'msg_mock_1' },
    })
    const second = answer(changed, headers, 2, fingerprints)
    const start = 'sse' in second ? (second.sse[0] ?? '') : ''
    const message = (JSON.parse(start.split('data: ')[1] ?? '{}') as { message: Record<string, unknown> }).message
    expect(message['diagnostics']).toEqual({
      cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: expect.any(Number) },
    })
  })
})
