import type { IncomingMessage, ServerResponse } from 'node:http'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { useScriptedStack } from '../helpers/scripted-upstream.ts'
import { eventually } from '../helpers/stack.ts'

const scripted = useScriptedStack()

/** Sum of a metric's samples whose labels include all of `labels`, read from /metrics. */
async function scrape(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await request(`${scripted.stack.proxyUrl}/metrics`)).body.text()
  let total = 0
  for (const line of text.split('\n'))
    if (
      line.startsWith(`${name}{`) &&
      Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))
    )
      total += Number(line.slice(line.lastIndexOf(' ') + 1))
  return total
}

async function sessionTotals(id: string): Promise<Record<string, unknown>> {
  return (await (await request(`${scripted.stack.proxyUrl}/ctxgate/sessions/${id}`)).body.json()) as Record<
    string,
    unknown
  >
}

async function drain(incoming: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  for await (const chunk of incoming) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
}

const compaction = {
  type: 'compaction',
  input_tokens: 180_000,
  cache_read_input_tokens: 1_000,
  cache_creation_input_tokens: 2_000,
  output_tokens: 3_500,
}
const usage = {
  input_tokens: 23_000,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  output_tokens: 900,
  iterations: [compaction, { type: 'message', input_tokens: 23_000, output_tokens: 900 }],
}
const contextManagement = {
  applied_edits: [
    { type: 'clear_tool_uses_20250919', cleared_tool_uses: 8, cleared_input_tokens: 50_000 },
    { type: 'clear_thinking_20251015', cleared_thinking_turns: 3, cleared_input_tokens: 12_000 },
  ],
}
const message = {
  id: 'msg_billed',
  type: 'message',
  role: 'assistant',
  model: 'claude-billed-1',
  content: [{ type: 'text', text: 'Done.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
}

function answerJson(_request: IncomingMessage, response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ ...message, usage, context_management: contextManagement }))
}

function answerStream(_request: IncomingMessage, response: ServerResponse): void {
  const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
  response.writeHead(200, { 'content-type': 'text/event-stream' })
  response.end(
    frame('message_start', {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 23_000, output_tokens: 1 } },
    }) +
      frame('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }) +
      frame('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: 'Done.' },
      }) +
      frame('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      frame('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 900, iterations: usage.iterations },
        context_management: contextManagement,
      }) +
      frame('message_stop', { type: 'message_stop' }),
  )
}

describe('usage the upstream really bills, through ctxgate', () => {
  it('counts Anthropic compaction passes and server-side clearing, JSON and streamed', async () => {
    const labels = { model: 'claude-billed-1' }
    const before = {
      compactionInput: await scrape('ctxgate_tokens_total', { ...labels, kind: 'compaction_input' }),
      toolUses: await scrape('ctxgate_server_edits_total', { provider: 'anthropic', edit: 'clear_tool_uses' }),
    }
    const anthropic = new Anthropic({
      baseURL: scripted.stack.proxyUrl,
      apiKey: 'sk-ant-billed',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'billed-anthropic' },
    })
    const params = {
      model: 'claude-billed-1',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: 'Go on.' }],
    }
    scripted.upstream.handle(answerJson)
    const answered = await anthropic.messages.create(params)
    expect(answered.usage.input_tokens).toBe(23_000)
    scripted.upstream.handle(answerStream)
    const streamed = await anthropic.messages.stream(params).finalMessage()
    expect(streamed.usage.output_tokens).toBe(900)

    await eventually(async () => {
      expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'compaction_input' })).toBe(
        before.compactionInput + 360_000,
      )
    })
    expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'compaction_cache_read' })).toBe(2_000)
    expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'compaction_cache_write_5m' })).toBe(4_000)
    expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'compaction_output' })).toBe(7_000)
    expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'input' })).toBe(46_000)
    expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'output' })).toBe(1_800)
    expect(await scrape('ctxgate_server_edits_total', { provider: 'anthropic', edit: 'clear_tool_uses' })).toBe(
      before.toolUses + 16,
    )
    expect(await scrape('ctxgate_server_edits_total', { provider: 'anthropic', edit: 'clear_thinking' })).toBe(6)
    expect(await scrape('ctxgate_server_cleared_tokens_total', labels)).toBe(124_000)

    await eventually(async () => expect((await sessionTotals('billed-anthropic'))['turns']).toBe(2))
    expect(await sessionTotals('billed-anthropic')).toMatchObject({
      promptTokens: 46_000,
      outputTokens: 1_800,
      compactionPromptTokens: 366_000,
      compactionOutputTokens: 7_000,
      serverClearedToolUses: 16,
      serverClearedThinkingTurns: 6,
      serverClearedInputTokens: 124_000,
    })
  })

  it('counts OpenAI Responses cache writes as writes, not uncached input', async () => {
    const seen: Record<string, unknown>[] = []
    scripted.upstream.handle(async (incoming, response) => {
      seen.push(await drain(incoming))
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          id: 'resp_billed',
          object: 'response',
          status: 'completed',
          model: 'gpt-billed-1',
          output: [],
          usage: {
            input_tokens: 10_000,
            input_tokens_details: { cached_tokens: 2_000, cache_write_tokens: 7_000 },
            output_tokens: 50,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 10_050,
          },
        }),
      )
    })
    const openai = new OpenAI({
      baseURL: `${scripted.stack.proxyUrl}/v1`,
      apiKey: 'sk-openai-billed',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'billed-openai' },
    })
    await openai.responses.create({
      model: 'gpt-billed-1',
      input: [{ role: 'user', content: 'Hello' }],
    })
    expect(seen).toHaveLength(1)
    const labels = { model: 'gpt-billed-1' }
    await eventually(async () => expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'input' })).toBe(1_000))
    expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'cache_write_5m' })).toBe(7_000)
    expect(await scrape('ctxgate_tokens_total', { ...labels, kind: 'cache_read' })).toBe(2_000)
    await eventually(async () =>
      expect(await sessionTotals('billed-openai')).toMatchObject({
        promptTokens: 10_000,
        inputTokens: 1_000,
        cacheWriteTokens: 7_000,
        cacheReadTokens: 2_000,
      }),
    )
  })
})
