import type { IncomingMessage, ServerResponse } from 'node:http'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Step } from '../helpers/conversations.ts'
import { useScriptedStack } from '../helpers/scripted-upstream.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'
import { responsesInput } from '../helpers/wire-formats.ts'

const round = (size: number): Step => ({
  kind: 'round',
  calls: 1,
  sizes: [size, size, size],
  outputKind: 'log',
  thinking: false,
  extraField: false,
})
/** About 60k tokens of tool output in twelve rounds. */
const input = responsesInput(
  Array.from({ length: 12 }, () => round(10_000)),
) as unknown as OpenAI.Responses.ResponseInput
const model = { match: 'gpt-5*', window: 100_000, budget: 0.95, minCacheableTokens: 1024, thinkingBoundToPrefix: false }

describe('a Responses 400 that names no numbers ("Your input exceeds the context window of this model")', () => {
  let stack: Stack
  beforeAll(async () => {
    // ctxgate believes in a 100k window; the upstream enforces 40k and says only "too long".
    stack = await startStack({ mock: { window: 40_000 }, config: { models: [model] } })
  })
  afterAll(() => stack.close())

  it('re-plans below what was refused, sends one smaller request, and remembers the limit for the next', async () => {
    const client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const answer = await client.responses.create({ model: 'gpt-5', input, prompt_cache_key: 'refit-a' })
    expect(answer.status).toBe('completed')
    expect(stack.mock.requests.map((seen) => seen.status)).toEqual([400, 200])
    const [first, second] = stack.mock.requests.map((seen) => seen.body.length)
    expect(second).toBeLessThan((first ?? 0) * 0.8)
    await eventually(() => expect(requestLogs(stack).at(-1)).toMatchObject({ status: 200, refit: true, attempts: 2 }))
    // The limit learned for this conversation: the next request is planned under it and fits at once.
    await client.responses.create({ model: 'gpt-5', input, prompt_cache_key: 'refit-a' })
    expect(stack.mock.requests.map((seen) => seen.status)).toEqual([400, 200, 200])
  })
})

/** The service's own opening of a stream, then whatever `after` says. */
function sseEvent(event: Record<string, unknown>): string {
  return `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`
}
const created = (id: string, sequence: number) =>
  sseEvent({ type: 'response.created', sequence_number: sequence, response: { id, status: 'in_progress', output: [] } })
const inProgress = (id: string, sequence: number) =>
  sseEvent({
    type: 'response.in_progress',
    sequence_number: sequence,
    response: { id, status: 'in_progress', output: [] },
  })
const tooLongError = sseEvent({
  type: 'error',
  sequence_number: 2,
  error: {
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
    param: 'input',
  },
})
const tooLongFailed = (id: string) =>
  sseEvent({
    type: 'response.failed',
    sequence_number: 2,
    response: {
      id,
      status: 'failed',
      error: { code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' },
    },
  })
function completedStream(id: string): string[] {
  const response = {
    id,
    object: 'response',
    status: 'completed',
    model: 'gpt-5',
    output: [
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'done', annotations: [] }],
      },
    ],
    usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, total_tokens: 901 },
  }
  return [
    created(id, 0) + inProgress(id, 1),
    sseEvent({
      type: 'response.output_text.delta',
      sequence_number: 2,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'done',
    }),
    sseEvent({ type: 'response.completed', sequence_number: 3, response }),
  ]
}

/** Answers each request with the next script; each script is the chunks to write, one write each. */
function scripted(...scripts: string[][]): {
  handler: (request: IncomingMessage, response: ServerResponse) => Promise<void>
  bodies: string[]
} {
  const bodies: string[] = []
  return {
    bodies,
    handler: async (incoming, response) => {
      let body = ''
      for await (const chunk of incoming) body += String(chunk)
      bodies.push(body)
      const script = scripts[bodies.length - 1] ?? []
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const chunk of script) {
        response.write(chunk)
        await new Promise((resolve) => setImmediate(resolve))
      }
      response.end()
    },
  }
}

describe('a Responses stream refused for length after its preamble (200, then an error event)', () => {
  const scriptedStack = useScriptedStack()
  const post = (body: unknown) =>
    request(`${scriptedStack.stack.proxyUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify(body),
    })

  it.each([
    ['an error event', tooLongError],
    ['response.failed', tooLongFailed('resp_1')],
  ])('sends one smaller request on %s and the client sees only the refit stream', async (_name, refusal) => {
    const upstream = scripted([created('resp_1', 0), inProgress('resp_1', 1), refusal], completedStream('resp_2'))
    scriptedStack.upstream.handle(upstream.handler)
    const client = new OpenAI({ baseURL: `${scriptedStack.stack.proxyUrl}/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const stream = await client.responses.create({
      model: 'gpt-5',
      input,
      stream: true,
      prompt_cache_key: `stream-${_name}`,
    })
    const events: { type: string; id?: string }[] = []
    for await (const event of stream)
      events.push({ type: event.type, ...('response' in event ? { id: event.response.id } : {}) })
    expect(events).toEqual([
      { type: 'response.created', id: 'resp_2' },
      { type: 'response.in_progress', id: 'resp_2' },
      { type: 'response.output_text.delta' },
      { type: 'response.completed', id: 'resp_2' },
    ])
    expect(upstream.bodies).toHaveLength(2)
    expect(upstream.bodies[1]?.length).toBeLessThan((upstream.bodies[0]?.length ?? 0) * 0.8)
    await eventually(() =>
      expect(requestLogs(scriptedStack.stack).at(-1)).toMatchObject({ status: 200, refit: true, attempts: 2 }),
    )
  })

  it('passes a stream that is not refused byte for byte, the held preamble first', async () => {
    const chunks = completedStream('resp_9')
    const upstream = scripted(chunks)
    scriptedStack.upstream.handle(upstream.handler)
    const answer = await post({ model: 'gpt-5', stream: true, input: 'hello', prompt_cache_key: 'k' })
    expect(await answer.body.text()).toBe(chunks.join(''))
    expect(upstream.bodies).toHaveLength(1)
  })

  it('passes a stream of only preamble and comments as sent when it ends early', async () => {
    const chunks = [created('resp_8', 0), ': keep-alive\n\n', inProgress('resp_8', 1)]
    scriptedStack.upstream.handle(scripted(chunks).handler)
    const answer = await post({ model: 'gpt-5', stream: true, input: 'hello', prompt_cache_key: 'k' })
    expect(await answer.body.text()).toBe(chunks.join(''))
  })

  it('relays the refit stream as it comes when the refit is refused too: one new request, never two', async () => {
    const refused = [created('resp_1', 0) + inProgress('resp_1', 1), tooLongError]
    const upstream = scripted(refused, refused, completedStream('resp_3'))
    scriptedStack.upstream.handle(upstream.handler)
    const answer = await post({ model: 'gpt-5', stream: true, input, prompt_cache_key: 'twice' })
    expect(await answer.body.text()).toBe(refused.join(''))
    expect(upstream.bodies).toHaveLength(2)
  })

  it('holds nothing back for x-ctxgate-mode: passthrough (no refit): the refusal reaches the client', async () => {
    const refused = [created('resp_1', 0) + inProgress('resp_1', 1), tooLongError]
    const upstream = scripted(refused)
    scriptedStack.upstream.handle(upstream.handler)
    const answer = await request(`${scriptedStack.stack.proxyUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ctxgate-mode': 'passthrough' },
      body: JSON.stringify({ model: 'gpt-5', stream: true, input }),
    })
    expect(await answer.body.text()).toBe(refused.join(''))
    expect(upstream.bodies).toHaveLength(1)
  })
})
