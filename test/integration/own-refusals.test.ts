import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack.close())

/** A budget no single message of this size fits: ctxgate answers itself, as the API would. */
const tight = { headers: { 'x-ctxgate-budget': '500' } }
const longText = 'The build log line repeats here with a few words more. '.repeat(400)

describe("ctxgate's own length refusals, as the SDKs see them", () => {
  it('Anthropic: invalid_request_error whose message begins "prompt is too long: N tokens > M maximum"', async () => {
    const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-test', maxRetries: 0 })
    stack.mock.reset()
    const call = client.messages.create(
      { model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: longText }] },
      tight,
    )
    const error = await call.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    const failed = error as InstanceType<typeof Anthropic.BadRequestError>
    expect(failed.headers.get('x-ctxgate-error-code')).toBe('CTXGATE_CONTEXT_TOO_LONG')
    expect(failed.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    const message = (failed.error as { error: { message: string } }).error.message
    const [, size, limit] = /^prompt is too long: (\d+) tokens > (\d+) maximum /.exec(message) ?? []
    expect(Number(size)).toBeGreaterThan(Number(limit))
    expect(message).toContain('ctxgate did not send this request')
    expect(message).toContain('The x-ctxgate-budget header lowers it to 500.')
    expect(stack.mock.requests).toHaveLength(0)
  })

  it("Anthropic: a max_tokens that leaves little room is named, with the window, what remains and Claude Code's variable", async () => {
    const client = new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-test',
      maxRetries: 0,
      defaultHeaders: { 'user-agent': 'claude-cli/2.0.14 (external, cli)' },
    })
    stack.mock.reset()
    const call = client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 199_000,
      stream: true,
      messages: [{ role: 'user', content: longText }],
    })
    const error = await call.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    const message = ((error as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { message: string } })
      .error.message
    expect(message).toMatch(/^prompt is too long: \d+ tokens > 1000 maximum /)
    expect(message).toContain(
      "The model's window is 200,000 tokens and this request reserves max_tokens 199,000 of it for the answer, leaving 1,000 for the prompt.",
    )
    expect(message).toContain('lower max_tokens (Claude Code: set CLAUDE_CODE_MAX_OUTPUT_TOKENS')
    expect(stack.mock.requests).toHaveLength(0)
  })

  it('OpenAI Chat: code context_length_exceeded with the classic wording first', async () => {
    const client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const call = client.chat.completions.create(
      { model: 'gpt-4o', messages: [{ role: 'user', content: longText }] },
      tight,
    )
    const error = await call.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    const failed = error as InstanceType<typeof OpenAI.BadRequestError>
    expect(failed.code).toBe('context_length_exceeded')
    expect(failed.type).toBe('invalid_request_error')
    expect(failed.message).toMatch(
      /This model's maximum context length is \d+ tokens\. However, your messages resulted in \d+ tokens\. This conversation/,
    )
    expect(failed.headers.get('x-ctxgate-error-code')).toBe('CTXGATE_CONTEXT_TOO_LONG')
  })

  it('OpenAI Responses: code context_length_exceeded, "Your input exceeds the context window of this model." first', async () => {
    const client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const call = client.responses.create({ model: 'gpt-4o', input: [{ role: 'user', content: longText }] }, tight)
    const error = await call.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    const failed = error as InstanceType<typeof OpenAI.BadRequestError>
    expect(failed.code).toBe('context_length_exceeded')
    expect((failed.error as { message: string }).message).toMatch(
      /^Your input exceeds the context window of this model\. This conversation got too long/,
    )
  })

  it("OpenAI Responses: the answer's allowance is named as the request named it (max_output_tokens)", async () => {
    const client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const call = client.responses.create({
      model: 'gpt-4o',
      max_output_tokens: 127_000,
      input: [{ role: 'user', content: longText }],
    })
    const error = await call.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    const message = (error as InstanceType<typeof OpenAI.BadRequestError>).message
    expect(message).toMatch(/reserves max_output_tokens 127,000 of it for the answer, leaving 1,000 for the prompt\./)
    expect(message).toContain('To give the prompt more room, lower max_output_tokens;')
    expect(message).not.toContain('CLAUDE_CODE')
  })
})
