import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
let client: OpenAI

beforeAll(async () => {
  stack = await startStack()
  client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-openai-string-input', maxRetries: 0 })
})
afterAll(() => stack.close())
beforeEach(() => stack.mock.reset())

async function turnsOf(session: string): Promise<unknown> {
  const answer = await request(`${stack.proxyUrl}/ctxgate/sessions/${session}`)
  return answer.statusCode === 200 ? ((await answer.body.json()) as { turns: number }).turns : undefined
}

describe('POST /v1/responses with a plain string input, through the openai SDK', () => {
  it('is read as one user message: budget-checked, counted, given a cache key, the string left as sent', async () => {
    const params = { model: 'gpt-5', input: 'Say hi in one word.' }
    const { data, response } = await client.responses
      .create(params, { headers: { 'x-ctxgate-debug': '1', 'x-ctxgate-session': 'plain-string' } })
      .withResponse()
    expect(data.output_text).toContain('mock upstream')
    expect(response.headers.get('x-ctxgate-rewrite')).toBe('rewritten')
    expect(Number(response.headers.get('x-ctxgate-estimate-before'))).toBeGreaterThan(0)
    expect(Number(response.headers.get('x-ctxgate-budget'))).toBeGreaterThan(0)

    const sent = stack.mock.requests.at(-1)?.body ?? ''
    const body = JSON.parse(sent) as Record<string, unknown>
    expect(body['input']).toBe(params.input)
    expect(body['prompt_cache_key']).toBe('plain-string')
    // Only the key was spliced in: every byte the SDK wrote follows it unchanged.
    expect(sent.endsWith(JSON.stringify(params).slice(1))).toBe(true)
    await eventually(async () => expect(await turnsOf('plain-string')).toBe(1))
  })

  it('streams and counts a string input the same way', async () => {
    const stream = client.responses.stream(
      { model: 'gpt-5', input: 'Stream a greeting.' },
      { headers: { 'x-ctxgate-session': 'plain-string-stream' } },
    )
    const final = await stream.finalResponse()
    expect(final.usage?.input_tokens).toBeGreaterThan(0)
    expect(JSON.parse(stack.mock.requests.at(-1)?.body ?? '{}')).toMatchObject({
      input: 'Stream a greeting.',
      prompt_cache_key: 'plain-string-stream',
    })
    await eventually(async () => expect(await turnsOf('plain-string-stream')).toBe(1))
  })

  it('keeps a client prompt_cache_key and refuses a string that cannot fit the budget, as the API would', async () => {
    await client.responses.create({ model: 'gpt-5', input: 'Hi', prompt_cache_key: 'mine' })
    expect(JSON.parse(stack.mock.requests.at(-1)?.body ?? '{}')).toMatchObject({ prompt_cache_key: 'mine' })
    stack.mock.reset()
    const longText = 'The build log line repeats here with a few words more. '.repeat(400)
    const error = await client.responses
      .create({ model: 'gpt-5', input: longText }, { headers: { 'x-ctxgate-budget': '500' } })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded')
    expect(stack.mock.requests).toHaveLength(0)
  })
})
