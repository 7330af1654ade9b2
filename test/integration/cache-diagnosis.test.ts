import Anthropic from '@anthropic-ai/sdk'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildMessages, type Step } from '../helpers/conversations.ts'
import { startRecordingRelay, type RecordingRelay } from '../helpers/recording-relay.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

const betas: Anthropic.Beta.AnthropicBeta[] = ['cache-diagnosis-2026-04-07']
const model = 'claude-sonnet-4-5'
const round = (size: number): Step => ({
  kind: 'round',
  calls: 2,
  sizes: [size, size, size],
  outputKind: 'json',
  thinking: false,
  extraField: false,
})
const longTask = `Task: ${'keep the build green and explain every step. '.repeat(150)}`

let relay: RecordingRelay
let stack: Stack

beforeAll(async () => {
  relay = await startRecordingRelay()
  // ctxgate → recording relay → mock, all on loopback: the relay keeps the bytes the upstream sent.
  stack = await startStack({
    mock: { window: 30_000 },
    config: {
      upstreams: { anthropic: { url: relay.url }, openai: { url: relay.url } },
      models: [{ match: '*', window: 30_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
    },
  })
  relay.target = stack.mock.url
})
afterAll(async () => {
  await stack.close()
  await relay.close()
})

function clientFor(session: string): Anthropic {
  return new Anthropic({
    baseURL: stack.proxyUrl,
    apiKey: 'sk-ant-diagnosis',
    maxRetries: 0,
    defaultHeaders: { 'x-ctxgate-session': session },
  })
}

async function metricsText(): Promise<string> {
  return (await request(`${stack.proxyUrl}/metrics`)).body.text()
}

function diagnosedCount(text: string, reason: string, agrees: string): number {
  const line = text
    .split('\n')
    .find((entry) =>
      entry.startsWith(
        `ctxgate_cache_miss_diagnosed_total{provider="anthropic",reason="${reason}",agrees="${agrees}"}`,
      ),
    )
  return Number(line?.split(' ').at(-1) ?? Number.NaN)
}

/** The log line of the n-th request (from 1) ctxgate relayed under this session id. */
function logOf(session: string, nth: number): Record<string, unknown> | undefined {
  return requestLogs(stack).filter((line) => line['session'] === session)[nth - 1]
}

describe("Anthropic's cache diagnosis through ctxgate, with the SDK's beta client", () => {
  it('confirms a batch ctxgate planned as messages_changed, streamed and not, and counts it as agreeing', async () => {
    const client = clientFor('planned')
    const all = buildMessages(
      Array.from({ length: 16 }, () => round(4_000)),
    ) as unknown as Anthropic.Beta.BetaMessageParam[]
    let previous: string | null = null
    const reasons: (string | undefined)[] = []
    for (let end = 3, turn = 0; end <= all.length; end += 2, turn++) {
      const params = {
        model,
        max_tokens: 256,
        betas,
        diagnostics: { previous_message_id: previous },
        messages: all.slice(0, end),
      }
      const message: Anthropic.Beta.BetaMessage =
        turn % 2 === 0
          ? await client.beta.messages.create(params)
          : await client.beta.messages.stream(params).finalMessage()
      reasons.push(message.diagnostics?.cache_miss_reason?.type)
      previous = message.id
    }
    await eventually(() => expect(logOf('planned', reasons.length)).toBeDefined())
    const lines = reasons.map((_, index) => logOf('planned', index + 1) ?? {})
    // The first request named no previous message: nothing to diagnose, nothing counted.
    expect(lines[0]).not.toHaveProperty('cacheMiss')
    const batches = lines.filter((line) => line['prefixBreak'] === 'ctxgate_batch')
    expect(batches.length).toBeGreaterThan(1)
    for (const line of batches)
      expect(line['cacheMiss']).toMatchObject({
        reason: expect.stringMatching(/^(messages|system)_changed$/),
        missedTokens: expect.any(Number),
        agrees: 'yes',
      })
    // Each log line carries what the SDK itself read from the answer.
    lines.slice(1).forEach((line, index) => {
      const said = reasons[index + 1]
      expect(line['cacheMiss']).toMatchObject({ reason: said ?? 'none', agrees: 'yes' })
    })
    expect(reasons).toContain('messages_changed')
    const text = await metricsText()
    expect(diagnosedCount(text, 'messages_changed', 'yes')).toBeGreaterThan(0)
    expect(diagnosedCount(text, 'none', 'yes')).toBeGreaterThan(0)
  })

  // ctxgate takes a changed system for a new conversation, so its own prefix-break count never sees this miss.
  it('reports a client that changed its system as system_changed, which ctxgate itself had not seen', async () => {
    const client = clientFor('system')
    const base = { model, max_tokens: 64, betas, messages: [{ role: 'user' as const, content: longTask }] }
    const first = await client.beta.messages.create({ ...base, system: 'You are careful.', diagnostics: {} })
    const before = diagnosedCount(await metricsText(), 'system_changed', 'no')
    const second = await client.beta.messages.create({
      ...base,
      system: 'You are careful and quick.',
      diagnostics: { previous_message_id: first.id },
    })
    expect(second.diagnostics?.cache_miss_reason).toEqual({
      type: 'system_changed',
      cache_missed_input_tokens: expect.any(Number),
    })
    await eventually(() =>
      expect(logOf('system', 2)).toMatchObject({ cacheMiss: { reason: 'system_changed', agrees: 'no' } }),
    )
    expect(diagnosedCount(await metricsText(), 'system_changed', 'no')).toBe(before + 1)
  })

  it('relays the diagnosed answers byte for byte, JSON and SSE', async () => {
    const client = clientFor('bytes')
    const base = { model, max_tokens: 64, betas, messages: [{ role: 'user' as const, content: longTask }] }
    const first = await client.beta.messages.create({ ...base, diagnostics: { previous_message_id: null } })
    const json = await client.beta.messages
      .create({ ...base, model: 'claude-opus-4-5', diagnostics: { previous_message_id: first.id } })
      .asResponse()
    const jsonText = await json.text()
    expect(Buffer.from(jsonText)).toEqual(relay.answers.at(-1))
    expect(JSON.parse(jsonText)).toMatchObject({ diagnostics: { cache_miss_reason: { type: 'model_changed' } } })
    const sse = await client.beta.messages
      .create({ ...base, stream: true, diagnostics: { previous_message_id: 'msg_never_sent' } })
      .asResponse()
    const sseText = await sse.text()
    expect(Buffer.from(sseText)).toEqual(relay.answers.at(-1))
    expect(sseText).toContain('"diagnostics":{"cache_miss_reason":{"type":"previous_message_not_found"}}')
    await eventually(() =>
      expect(logOf('bytes', 3)).toMatchObject({
        cacheMiss: { reason: 'previous_message_not_found', agrees: 'unknown' },
      }),
    )
  })

  it('gives a request without the beta no diagnostics field, and counts nothing for it', async () => {
    const client = clientFor('unasked')
    const base = { model, max_tokens: 64, messages: [{ role: 'user' as const, content: longTask }] }
    const plain = await (await client.beta.messages.create(base).asResponse()).text()
    const streamed = await (await client.beta.messages.create({ ...base, stream: true }).asResponse()).text()
    expect(plain).not.toContain('diagnostics')
    expect(streamed).not.toContain('diagnostics')
    expect(JSON.parse(plain)).toMatchObject({ type: 'message', usage: { input_tokens: expect.any(Number) } })
    await eventually(() => expect(logOf('unasked', 2)).toBeDefined())
    expect(logOf('unasked', 1)).not.toHaveProperty('cacheMiss')
    expect(logOf('unasked', 2)).not.toHaveProperty('cacheMiss')
  })
})
