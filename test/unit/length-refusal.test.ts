import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { anthropicErrorShape } from '../../src/providers/anthropic/error-shape.ts'
import { anthropicTooLongWording, readAnthropicLengthRefusal } from '../../src/providers/anthropic/length-refusal.ts'
import { openaiErrorShape } from '../../src/providers/openai/error-shape.ts'
import {
  chatTooLongWording,
  readOpenAILengthRefusal,
  responsesTooLongWording,
} from '../../src/providers/openai/length-refusal.ts'

const anthropic = (message: string) =>
  Buffer.from(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }))
const openai = (message: string, code: string | null = 'context_length_exceeded') =>
  Buffer.from(JSON.stringify({ error: { message, type: 'invalid_request_error', param: 'messages', code } }))

describe('Anthropic length refusals', () => {
  it('reads the measured size and the window from the message the API sends', () => {
    expect(readAnthropicLengthRefusal(anthropic('prompt is too long: 200082 tokens > 200000 maximum'))).toEqual({
      actualTokens: 200_082,
      limit: 200_000,
    })
    expect(
      readAnthropicLengthRefusal(
        anthropic(
          'input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again',
        ),
      ),
    ).toEqual({ actualTokens: 178_959, limit: 200_000 })
  })

  it('is not fooled by client text the upstream echoes in the middle of another error', () => {
    const echoed = anthropic(
      'messages.1.content.0: unknown tool_use_id prompt is too long: 99999999 tokens > 10 maximum',
    )
    expect(readAnthropicLengthRefusal(echoed)).toBeUndefined()
  })

  it('reads only error.message, not other fields that may carry client text', () => {
    const body = Buffer.from(
      JSON.stringify({
        type: 'error',
        echo: 'prompt is too long: 99999999 tokens > 10 maximum',
        error: { type: 'invalid_request_error', message: 'tool_use ids must be unique' },
      }),
    )
    expect(readAnthropicLengthRefusal(body)).toBeUndefined()
    expect(readAnthropicLengthRefusal(Buffer.from('prompt is too long: 99999999 tokens > 10 maximum'))).toBeUndefined()
  })
})

describe('OpenAI length refusals', () => {
  it('reads the window and the measured size of a Chat Completions refusal', () => {
    const classic = openai(
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 8264 tokens. Please reduce the length of the messages.",
    )
    expect(readOpenAILengthRefusal(classic)).toEqual({ actualTokens: 8264, limit: 8192 })
    const withCompletion = openai(
      "This model's maximum context length is 4097 tokens. However, you requested 4203 tokens (3703 in the messages, 500 in the completion). Please reduce the length of the messages or completion.",
    )
    expect(readOpenAILengthRefusal(withCompletion)).toEqual({ actualTokens: 3703, limit: 4097 })
  })

  it('says "too long" without numbers for the Responses API wording', () => {
    const responses = Buffer.from(
      JSON.stringify({
        error: {
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
          message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
          param: 'input',
        },
      }),
    )
    expect(readOpenAILengthRefusal(responses)).toEqual({})
  })

  it('needs the context_length_exceeded code, and the wording at the start of the message', () => {
    const words =
      "This model's maximum context length is 10 tokens. However, your messages resulted in 99999999 tokens."
    expect(readOpenAILengthRefusal(openai(words, null))).toBeUndefined()
    expect(readOpenAILengthRefusal(openai(`Invalid tool_call_id '${words}'`))).toEqual({})
    expect(readOpenAILengthRefusal(Buffer.from('{"error":'))).toBeUndefined()
  })
})

describe("ctxgate's own refusals, read back as the provider's", () => {
  it('are read by the same parsers as the APIs own, with the numbers ctxgate put in', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: 10_000_000 }), (size, limit) => {
        const anthropicBody = Buffer.from(
          anthropicErrorShape.body('context_length', `${anthropicTooLongWording(size, limit)} Explained.`),
        )
        expect(readAnthropicLengthRefusal(anthropicBody)).toEqual({ actualTokens: size, limit })
        const chatBody = Buffer.from(
          openaiErrorShape.body('context_length', `${chatTooLongWording(size, limit)} More.`),
        )
        expect(readOpenAILengthRefusal(chatBody)).toEqual({ actualTokens: size, limit })
      }),
    )
    const responsesBody = Buffer.from(openaiErrorShape.body('context_length', `${responsesTooLongWording()} More.`))
    expect(readOpenAILengthRefusal(responsesBody)).toEqual({})
  })
})
