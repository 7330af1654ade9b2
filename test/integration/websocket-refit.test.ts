import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RawData } from 'ws'
import type { Step } from '../helpers/conversations.ts'
import { collect, openSocket, startScriptedUpstream, turn, type ScriptedUpstream } from '../helpers/sockets.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'
import { responsesInput } from '../helpers/wire-formats.ts'

const wsUrl = (stack: Stack): string => `${stack.proxyUrl.replace('http', 'ws')}/v1/responses`
const auth = { authorization: 'Bearer sk-openai-test-key-0003', 'openai-beta': 'responses_websockets=2026-02-06' }
const round = (size: number): Step => ({
  kind: 'round',
  calls: 1,
  sizes: [size, size, size],
  outputKind: 'log',
  thinking: false,
  extraField: false,
})
/** About 60k tokens of tool output in twelve rounds. */
const input = responsesInput(Array.from({ length: 12 }, () => round(10_000)))
const model = { match: 'gpt-5*', window: 100_000, budget: 0.95, minCacheableTokens: 1024, thinkingBoundToPrefix: false }
const create = (key: string) => ({
  type: 'response.create',
  model: 'gpt-5',
  store: false,
  prompt_cache_key: key,
  input,
})

describe('Responses over WebSocket: a length refusal as the first event', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ mock: { window: 40_000 }, config: { models: [model] } })
  })
  afterAll(() => stack.close())

  it('sends one smaller response.create instead; the client sees only the smaller response', async () => {
    const socket = await openSocket(wsUrl(stack), auth)
    const events = await turn(socket, create('ws-refit'))
    socket.close()
    expect(events.map((event) => event['type'])).not.toContain('error')
    expect(events.at(-1)?.['type']).toBe('response.completed')
    const sent = stack.mock.requests.filter((request) => request.method === 'WS')
    expect(sent).toHaveLength(2)
    expect(sent[1]?.body.length).toBeLessThan((sent[0]?.body.length ?? 0) * 0.8)
    expect(JSON.parse(sent[1]?.body ?? '{}')).toMatchObject({ type: 'response.create', model: 'gpt-5' })
    await eventually(() => expect(requestLogs(stack).at(-1)).toMatchObject({ refit: true, status: 200 }))
  })
})

describe('Responses over WebSocket: a length refusal after the preamble, against a scripted upstream', () => {
  let upstream: ScriptedUpstream
  let stack: Stack
  beforeAll(async () => {
    upstream = await startScriptedUpstream()
    stack = await startStack({
      config: { upstreams: { anthropic: { url: upstream.url }, openai: { url: upstream.url } } },
    })
  })
  afterAll(async () => {
    await stack.close()
    await upstream.close()
  })
  afterEach(() => {
    for (const entry of upstream.sockets) entry.socket.terminate()
  })

  const created = (id: string) => JSON.stringify({ type: 'response.created', response: { id, status: 'in_progress' } })
  const inProgress = (id: string) => JSON.stringify({ type: 'response.in_progress', response: { id } })
  const refusal = JSON.stringify({
    type: 'error',
    status: 400,
    error: {
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      message: 'Your input exceeds the context window of this model.',
    },
  })
  const completed = (id: string) =>
    JSON.stringify({
      type: 'response.completed',
      response: { id, output: [], usage: { input_tokens: 5, output_tokens: 1 } },
    })

  it('drops the refused preamble and relays only the smaller response', async () => {
    const client = await openSocket(wsUrl(stack), auth)
    const { socket } = await upstream.next()
    const received: string[] = []
    socket.on('message', (data: RawData) => {
      received.push(String(data))
      if (received.length === 1)
        for (const message of [created('resp_1'), inProgress('resp_1'), refusal]) socket.send(message)
      else for (const message of [created('resp_2'), inProgress('resp_2'), completed('resp_2')]) socket.send(message)
    })
    const events = await turn(client, create('scripted-refit'))
    expect(events.map((event) => JSON.stringify(event))).toEqual([
      created('resp_2'),
      inProgress('resp_2'),
      completed('resp_2'),
    ])
    expect(received).toHaveLength(2)
    expect(received[1]?.length).toBeLessThan((received[0]?.length ?? 0) * 0.8)
    expect(JSON.parse(received[1] ?? '{}')).not.toHaveProperty('previous_response_id')
  })

  it('relays a response that is not refused byte for byte, the held preamble first', async () => {
    const client = await openSocket(wsUrl(stack), auth)
    const { socket } = await upstream.next()
    const messages = [
      created('resp_5'),
      inProgress('resp_5'),
      '{"type":"response.output_text.delta","delta":"h\\u00e9"}',
      completed('resp_5'),
    ]
    socket.on('message', () => {
      for (const message of messages) socket.send(message)
    })
    const all = collect(client)
    await turn(client, create('scripted-pass'))
    expect(all.map((entry) => entry.text)).toEqual(messages)
  })

  it('relays the refit response as it comes when it is refused too: one new request, never two', async () => {
    const client = await openSocket(wsUrl(stack), auth)
    const { socket } = await upstream.next()
    let count = 0
    socket.on('message', () => {
      count++
      for (const message of [created(`resp_${count}`), refusal]) socket.send(message)
    })
    const events = await turn(client, create('scripted-twice'))
    expect(events.map((event) => JSON.stringify(event))).toEqual([created('resp_2'), refusal])
    expect(count).toBe(2)
  })
})
