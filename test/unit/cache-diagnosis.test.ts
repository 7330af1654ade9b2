import fc from 'fast-check'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { cacheMissAgreement, cacheMissLabelPairs } from '../../src/request/cache-miss-agreement.ts'
import { createProxyMetrics } from '../../src/metrics/proxy-metrics.ts'
import { cacheMissReasons, type CacheMissReason } from '../../src/model-call/cache-diagnosis.ts'
import type { AnsweredRequest, UsageReader } from '../../src/model-call/usage.ts'
import { asksCacheDiagnosis } from '../../src/providers/anthropic/cache-diagnosis.ts'
import { createAnthropicUsageReader } from '../../src/providers/anthropic/usage.ts'
import type { PrefixBreak } from '../../src/rewrite/prefix-break.ts'

const beta = 'cache-diagnosis-2026-04-07'
const asked: AnsweredRequest = {
  body: { model: 'claude-sonnet-5', diagnostics: { previous_message_id: 'msg_01' } },
  headers: { 'anthropic-beta': `context-management-2025-06-27, ${beta}` },
}
const usage = { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 2 }
const missed = { type: 'messages_changed', cache_missed_input_tokens: 4_000 }

function feed(reader: UsageReader, events: [string, unknown][]): void {
  for (const [event, data] of events) reader.onEvent({ event, data: JSON.stringify(data) })
}

describe('which requests asked for a cache diagnosis', () => {
  it('needs both the beta and a previous message named in the body', () => {
    expect(asksCacheDiagnosis(asked)).toBe(true)
    expect(asksCacheDiagnosis({ ...asked, headers: { 'anthropic-beta': [`other-beta`, beta] } })).toBe(true)
    expect(asksCacheDiagnosis({ ...asked, headers: {} })).toBe(false)
    expect(asksCacheDiagnosis({ ...asked, headers: { 'anthropic-beta': 'context-management-2025-06-27' } })).toBe(false)
    expect(asksCacheDiagnosis({ ...asked, body: { diagnostics: { previous_message_id: null } } })).toBe(false)
    expect(asksCacheDiagnosis({ ...asked, body: { diagnostics: 'msg_01' } })).toBe(false)
    expect(asksCacheDiagnosis({ ...asked, body: {} })).toBe(false)
    expect(asksCacheDiagnosis(undefined)).toBe(false)
  })
})

describe('the Anthropic usage reader with a cache diagnosis', () => {
  it('reads the reason and missed tokens from a JSON answer the client asked a diagnosis for', () => {
    const reader = createAnthropicUsageReader(asked)
    expect(reader.fromJson({ usage, diagnostics: { cache_miss_reason: missed } })?.cacheDiagnosis).toEqual({
      reason: 'messages_changed',
      missedTokens: 4_000,
    })
  })

  it('tells no divergence (null), a pending diagnosis, an unknown reason and no field at all apart', () => {
    const read = (answer: Record<string, unknown>) =>
      createAnthropicUsageReader(asked).fromJson({ usage, ...answer })?.cacheDiagnosis
    expect(read({ diagnostics: null })).toEqual({ reason: 'none' })
    expect(read({ diagnostics: { cache_miss_reason: null } })).toEqual({ reason: 'pending' })
    expect(read({ diagnostics: { cache_miss_reason: { type: 'previous_message_not_found' } } })).toEqual({
      reason: 'previous_message_not_found',
    })
    expect(
      read({ diagnostics: { cache_miss_reason: { type: 'speed_changed', cache_missed_input_tokens: 9 } } }),
    ).toEqual({
      reason: 'other',
      missedTokens: 9,
    })
    expect(read({ diagnostics: 'odd' })).toEqual({ reason: 'other' })
    expect(read({})).toBeUndefined()
  })

  it("ignores an answer's diagnostics when the client did not ask (the API may send null on every answer)", () => {
    const answer = { usage, diagnostics: { cache_miss_reason: missed } }
    expect(createAnthropicUsageReader().fromJson(answer)).not.toHaveProperty('cacheDiagnosis')
    const noBeta = { ...asked, headers: {} }
    expect(createAnthropicUsageReader(noBeta).fromJson(answer)).not.toHaveProperty('cacheDiagnosis')
  })

  it("reads it from a stream's message_start, which carries it", () => {
    const reader = createAnthropicUsageReader(asked)
    feed(reader, [
      ['message_start', { type: 'message_start', message: { usage, diagnostics: { cache_miss_reason: missed } } }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }],
    ])
    expect(reader.result()).toMatchObject({
      inputTokens: 10,
      outputTokens: 7,
      cacheDiagnosis: { reason: 'messages_changed', missedTokens: 4_000 },
    })
    const unasked = createAnthropicUsageReader()
    feed(unasked, [['message_start', { type: 'message_start', message: { usage, diagnostics: null } }]])
    expect(unasked.result()).not.toHaveProperty('cacheDiagnosis')
  })
})

describe("agreement between the provider's reason and ctxgate's own cause", () => {
  const own = (prefixBreak: PrefixBreak | undefined, newBatch = false) => ({ prefixBreak, newBatch })

  it('matches each cause of ctxgate with the part of the prompt it changes', () => {
    expect(cacheMissAgreement('messages_changed', own('ctxgate_batch', true))).toBe('yes')
    // ctxgate's note joins the system prompt with its first batch.
    expect(cacheMissAgreement('system_changed', own('ctxgate_batch', true))).toBe('yes')
    expect(cacheMissAgreement('tools_changed', own('ctxgate_batch', true))).toBe('no')
    expect(cacheMissAgreement('system_changed', own('client_edit'))).toBe('yes')
    expect(cacheMissAgreement('model_changed', own('client_edit'))).toBe('no')
    expect(cacheMissAgreement('model_changed', own('model_changed'))).toBe('yes')
    expect(cacheMissAgreement('none', own(undefined))).toBe('yes')
    expect(cacheMissAgreement('none', own('ctxgate_batch', true))).toBe('no')
    expect(cacheMissAgreement('system_changed', own(undefined))).toBe('no')
  })

  it('an expired entry is no change to the prompt, unless ctxgate used the cold cache for a batch', () => {
    expect(cacheMissAgreement('none', own('ttl_expired'))).toBe('yes')
    expect(cacheMissAgreement('messages_changed', own('ttl_expired'))).toBe('no')
    expect(cacheMissAgreement('messages_changed', own('ttl_expired', true))).toBe('yes')
    expect(cacheMissAgreement('none', own('ttl_expired', true))).toBe('no')
  })

  it('is unknown exactly when the provider named no part of the prompt, and every outcome has a zero series', () => {
    const causes: (PrefixBreak | undefined)[] = [
      undefined,
      'client_edit',
      'model_changed',
      'ctxgate_batch',
      'ttl_expired',
    ]
    fc.assert(
      fc.property(
        fc.constantFrom(...cacheMissReasons),
        fc.constantFrom(...causes),
        fc.boolean(),
        (reason, cause, batch) => {
          const agrees = cacheMissAgreement(reason, own(cause, batch))
          const promptPart: readonly CacheMissReason[] = [
            'none',
            'model_changed',
            'tools_changed',
            'system_changed',
            'messages_changed',
          ]
          expect(agrees === 'unknown').toBe(!promptPart.includes(reason))
          expect(cacheMissLabelPairs).toContainEqual([reason, agrees])
        },
      ),
    )
  })
})

describe('the diagnosis counter', () => {
  it('starts at 0 for every possible pair, only for providers that diagnose their cache misses', async () => {
    const registry = new Registry()
    createProxyMetrics(registry)
    const text = await registry.metrics()
    const series = text.split('\n').filter((line) => line.startsWith('ctxgate_cache_miss_diagnosed_total{'))
    expect(series).toHaveLength(cacheMissLabelPairs.length)
    expect(series).toContain(
      'ctxgate_cache_miss_diagnosed_total{provider="anthropic",reason="messages_changed",agrees="yes"} 0',
    )
    expect(series.every((line) => line.includes('provider="anthropic"'))).toBe(true)
  })
})
