import { describe, expect, it } from 'vitest'
import { billedTokenCounts, type UsageReader } from '../../src/model-call/usage.ts'
import { createAnthropicUsageReader } from '../../src/providers/anthropic/usage.ts'
import { createOpenAIUsageReader } from '../../src/providers/openai/usage.ts'

const compactionIteration = {
  type: 'compaction',
  input_tokens: 180_000,
  cache_read_input_tokens: 2_000,
  cache_creation_input_tokens: 500,
  cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 100 },
  output_tokens: 3_500,
}
const messageIteration = {
  type: 'message',
  input_tokens: 23_000,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  output_tokens: 1_000,
}
const appliedEdits = {
  applied_edits: [
    { type: 'clear_tool_uses_20250919', cleared_tool_uses: 8, cleared_input_tokens: 50_000 },
    { type: 'clear_thinking_20251015', cleared_thinking_turns: 3, cleared_input_tokens: 12_000 },
  ],
}

function feed(reader: UsageReader, events: [string | undefined, unknown][]): void {
  for (const [event, data] of events)
    reader.onEvent({ ...(event ? { event } : {}), data: typeof data === 'string' ? data : JSON.stringify(data) })
}

describe('Anthropic usage reader', () => {
  it('reads compaction iterations and applied edits from a JSON answer, beside the top-level counts', () => {
    const usage = createAnthropicUsageReader().fromJson({
      type: 'message',
      usage: { input_tokens: 23_000, output_tokens: 1_000, iterations: [compactionIteration, messageIteration] },
      context_management: appliedEdits,
    })
    expect(usage).toEqual({
      inputTokens: 23_000,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      cacheReadTokens: 0,
      outputTokens: 1_000,
      compaction: {
        inputTokens: 180_000,
        cacheWrite5mTokens: 400,
        cacheWrite1hTokens: 100,
        cacheReadTokens: 2_000,
        outputTokens: 3_500,
      },
      serverEdits: { clearedToolUses: 8, clearedThinkingTurns: 3, clearedInputTokens: 62_000 },
    })
  })

  it('sums several compaction passes and ignores message iterations (the top level already has them)', () => {
    const usage = createAnthropicUsageReader().fromJson({
      usage: {
        input_tokens: 10,
        output_tokens: 2,
        iterations: [compactionIteration, messageIteration, compactionIteration],
      },
    })
    expect(usage?.compaction?.inputTokens).toBe(360_000)
    expect(usage?.compaction?.outputTokens).toBe(7_000)
    expect(usage && billedTokenCounts(usage).inputTokens).toBe(360_010)
  })

  it('leaves compaction and server edits out when the answer has neither', () => {
    const usage = createAnthropicUsageReader().fromJson({
      usage: { input_tokens: 10, output_tokens: 2, iterations: [messageIteration] },
      context_management: null,
    })
    expect(usage).not.toHaveProperty('compaction')
    expect(usage).not.toHaveProperty('serverEdits')
  })

  it('reads them from a stream: iterations and applied edits on the final message_delta', () => {
    const reader = createAnthropicUsageReader()
    feed(reader, [
      ['message_start', { type: 'message_start', message: { usage: { input_tokens: 23_000, output_tokens: 1 } } }],
      ['content_block_delta', { type: 'content_block_delta', delta: { type: 'text_delta', text: 'hi' } }],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn' },
          usage: { output_tokens: 1_000, iterations: [compactionIteration, messageIteration] },
          context_management: appliedEdits,
        },
      ],
    ])
    expect(reader.complete()).toBe(true)
    expect(reader.result()).toMatchObject({
      inputTokens: 23_000,
      outputTokens: 1_000,
      compaction: { inputTokens: 180_000, cacheReadTokens: 2_000, outputTokens: 3_500 },
      serverEdits: { clearedToolUses: 8, clearedThinkingTurns: 3, clearedInputTokens: 62_000 },
    })
  })

  it('keeps the applied edits of a cut stream that got as far as the delta carrying them', () => {
    const reader = createAnthropicUsageReader()
    feed(reader, [
      ['message_start', { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } }],
      ['message_delta', { type: 'message_delta', usage: null, context_management: appliedEdits }],
    ])
    expect(reader.complete()).toBe(false)
    expect(reader.result()?.serverEdits?.clearedToolUses).toBe(8)
  })
})

describe('OpenAI usage reader', () => {
  const details = { cached_tokens: 1_000, cache_write_tokens: 3_000 }

  it('takes cache writes out of Chat prompt_tokens (JSON)', () => {
    const usage = createOpenAIUsageReader().fromJson({
      usage: { prompt_tokens: 5_000, completion_tokens: 40, prompt_tokens_details: details },
    })
    expect(usage).toEqual({
      inputTokens: 1_000,
      cacheWrite5mTokens: 3_000,
      cacheWrite1hTokens: 0,
      cacheReadTokens: 1_000,
      outputTokens: 40,
    })
  })

  it('takes cache writes out of Responses input_tokens (JSON)', () => {
    const usage = createOpenAIUsageReader().fromJson({
      object: 'response',
      usage: { input_tokens: 5_000, output_tokens: 40, input_tokens_details: details },
    })
    expect(usage).toMatchObject({ inputTokens: 1_000, cacheWrite5mTokens: 3_000, cacheReadTokens: 1_000 })
  })

  it('reads cache writes from the last Chat chunk', () => {
    const reader = createOpenAIUsageReader()
    feed(reader, [
      [undefined, { choices: [{ index: 0, delta: { content: 'hi' } }], usage: null }],
      [
        undefined,
        { choices: [], usage: { prompt_tokens: 5_000, completion_tokens: 40, prompt_tokens_details: details } },
      ],
      [undefined, '[DONE]'],
    ])
    expect(reader.result()).toMatchObject({ inputTokens: 1_000, cacheWrite5mTokens: 3_000, cacheReadTokens: 1_000 })
  })

  it('reads cache writes from response.completed', () => {
    const reader = createOpenAIUsageReader()
    feed(reader, [
      ['response.created', { type: 'response.created', response: { usage: null } }],
      [
        'response.completed',
        {
          type: 'response.completed',
          response: { usage: { input_tokens: 5_000, output_tokens: 40, input_tokens_details: details } },
        },
      ],
    ])
    expect(reader.complete()).toBe(true)
    expect(reader.result()).toMatchObject({ inputTokens: 1_000, cacheWrite5mTokens: 3_000, cacheReadTokens: 1_000 })
  })

  it('never reports negative uncached input when details exceed the total', () => {
    const usage = createOpenAIUsageReader().fromJson({ usage: { input_tokens: 10, input_tokens_details: details } })
    expect(usage?.inputTokens).toBe(0)
  })
})

describe('what an answer says about itself (gen_ai.response.*)', () => {
  it('reads an Anthropic answer’s id, model and stop reason from JSON and from a stream', () => {
    const json = createAnthropicUsageReader()
    json.fromJson({ id: 'msg_1', model: 'claude-sonnet-5', stop_reason: 'end_turn', usage: { input_tokens: 1 } })
    expect(json.response?.()).toEqual({ id: 'msg_1', model: 'claude-sonnet-5', finishReasons: ['end_turn'] })
    const stream = createAnthropicUsageReader()
    feed(stream, [
      ['message_start', { type: 'message_start', message: { id: 'msg_2', model: 'claude-sonnet-5', usage: {} } }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 3 } }],
    ])
    expect(stream.response?.()).toEqual({ id: 'msg_2', model: 'claude-sonnet-5', finishReasons: ['tool_use'] })
  })

  it('reads Chat Completions finish reasons and a Responses status', () => {
    const chat = createOpenAIUsageReader()
    feed(chat, [
      [undefined, { id: 'chatcmpl-1', model: 'gpt-5', choices: [{ delta: { content: 'hi' }, finish_reason: null }] }],
      [undefined, { id: 'chatcmpl-1', model: 'gpt-5', choices: [{ delta: {}, finish_reason: 'stop' }] }],
      [undefined, { id: 'chatcmpl-1', model: 'gpt-5', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }],
      [undefined, '[DONE]'],
    ])
    expect(chat.response?.()).toEqual({ id: 'chatcmpl-1', model: 'gpt-5', finishReasons: ['stop'] })
    const responses = createOpenAIUsageReader()
    feed(responses, [
      [
        'response.completed',
        {
          type: 'response.completed',
          response: { id: 'resp_1', model: 'gpt-5', status: 'completed', usage: { input_tokens: 4, output_tokens: 1 } },
        },
      ],
    ])
    expect(responses.response?.()).toEqual({ id: 'resp_1', model: 'gpt-5', finishReasons: ['completed'] })
  })
})
