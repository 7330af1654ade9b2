import Anthropic from '@anthropic-ai/sdk'
import fc from 'fast-check'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { maxReportedTokens } from '../../src/model-call/usage.ts'
import { createAnthropicUsageReader } from '../../src/providers/anthropic/usage.ts'
import { createOpenAIUsageReader } from '../../src/providers/openai/usage.ts'
import { useScriptedStack } from '../helpers/scripted-upstream.ts'

const scripted = useScriptedStack()

describe('upstream usage numbers', () => {
  it('does not let one absurd output_tokens (1e308) stay in ctxgate_tokens_total or the session totals', async () => {
    scripted.upstream.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      // Written by hand: 1e308 and a negative count, as a broken upstream might send them.
      response.end(
        '{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],' +
          '"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":1e308,"cache_read_input_tokens":-5,"cache_creation_input_tokens":3}}',
      )
    })
    const client = new Anthropic({ baseURL: scripted.stack.proxyUrl, apiKey: 'sk-ant-bounds', maxRetries: 0 })
    await client.messages.create(
      { model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] },
      { headers: { 'x-ctxgate-session': 'bounds' } },
    )
    const metrics = await (await request(`${scripted.stack.proxyUrl}/metrics`)).body.text()
    const tokenLines = metrics.split('\n').filter((line) => line.startsWith('ctxgate_tokens_total{'))
    expect(tokenLines.length).toBeGreaterThan(0)
    for (const line of tokenLines) expect(Number(line.split(' ').at(-1))).toBeLessThanOrEqual(maxReportedTokens)
    // Zero counts are not added at all: the rejected output and cache-read numbers leave no line.
    expect(tokenLines.some((line) => line.includes('kind="output"'))).toBe(false)
    expect(tokenLines.some((line) => line.includes('kind="cache_read"'))).toBe(false)
    expect(
      tokenLines
        .find((line) => line.includes('kind="input"'))
        ?.split(' ')
        .at(-1),
    ).toBe('12')
    const sessions = (await (await request(`${scripted.stack.proxyUrl}/ctxgate/sessions`)).body.json()) as {
      sessions: Record<string, unknown>[]
    }
    expect(JSON.stringify(sessions)).not.toContain('e+')
  })

  it('never lets any reported number become a count outside 0…maxReportedTokens (fast-check)', () => {
    const anyNumber = fc.oneof(
      fc.double(),
      fc.integer(),
      fc.constantFrom(1e308, -1, Number.MAX_SAFE_INTEGER, 1e9, 2 ** 53 + 1),
      fc.string(),
    )
    const usage = fc.record({
      input_tokens: anyNumber,
      output_tokens: anyNumber,
      cache_read_input_tokens: anyNumber,
      cache_creation_input_tokens: anyNumber,
      prompt_tokens: anyNumber,
      completion_tokens: anyNumber,
      iterations: fc.array(fc.record({ type: fc.constant('compaction'), input_tokens: anyNumber }), { maxLength: 5 }),
    })
    fc.assert(
      fc.property(usage, (reported) => {
        for (const reader of [createAnthropicUsageReader(), createOpenAIUsageReader()]) {
          const read = reader.fromJson({ usage: reported })
          const counts = [read, read?.compaction].flatMap((part) => (part ? Object.values(part) : []))
          for (const count of counts.filter((value) => typeof value === 'number')) {
            expect(Number.isInteger(count)).toBe(true)
            expect(count).toBeGreaterThanOrEqual(0)
            expect(count).toBeLessThanOrEqual(maxReportedTokens)
          }
        }
      }),
    )
  })
})
