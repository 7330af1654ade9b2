import { describe, expect, it } from 'vitest'
import { answerResponses, isRefusal, responsesSseFrames } from '../../src/mock/openai-responses.ts'
import { OpenAIPromptCache } from '../../src/mock/prompt-cache.ts'

const options = { windowFor: () => 10_000, minCacheableFor: () => 1024, replyText: (n: number) => `reply ${n}` }
const shell = {
  type: 'function',
  name: 'shell',
  parameters: { type: 'object', properties: { command: { type: 'array' } } },
}
const context = (request: Record<string, unknown>, agentSteps = 2) => ({
  request,
  options,
  cache: new OpenAIPromptCache(),
  replyKind: 'text' as const,
  sequence: 7,
  agentSteps,
})

describe('mock Responses API', () => {
  it('streams the full event sequence with sequence numbers from 0', () => {
    const turn = answerResponses(context({ model: 'gpt-5', input: 'hi' }))
    if (isRefusal(turn)) throw new Error('refused')
    const frames = responsesSseFrames(turn.events)
    const events = frames.map((frame) => JSON.parse(frame.split('\ndata: ')[1] ?? '{}') as Record<string, unknown>)
    expect(events.map((event) => event['type'])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(events.map((event) => event['sequence_number'])).toEqual(events.map((_, index) => index))
    expect(frames[0]).toMatch(/^event: response\.created\ndata: /)
  })

  it('calls a shell tool N times per user turn, then answers', () => {
    const first = answerResponses(context({ model: 'gpt-5', input: 'go', tools: [shell] }))
    if (isRefusal(first)) throw new Error('refused')
    expect(first.response['output']).toMatchObject([
      { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', 'seq 1 3000'] }) },
    ])
    const later = answerResponses({
      ...context({
        model: 'gpt-5',
        input: [{ type: 'function_call_output', call_id: 'call_mock_7', output: 'ok' }],
        tools: [shell],
      }),
      history: [
        ...first.conversation,
        { type: 'function_call_output', call_id: 'c', output: '' },
        { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'd' },
      ],
    })
    if (isRefusal(later)) throw new Error('refused')
    expect(later.response['output']).toMatchObject([{ type: 'message', role: 'assistant' }])
  })

  it('creates no output for generate:false and refuses input over the window', () => {
    const warm = answerResponses(context({ model: 'gpt-5', input: 'hi', generate: false }))
    expect(!isRefusal(warm) && warm.response['output']).toEqual([])
    const long = answerResponses(context({ model: 'gpt-5', input: 'word '.repeat(20_000) }))
    expect(isRefusal(long) && long.error.code).toBe('context_length_exceeded')
  })
})
