import { createServer, type IncomingHttpHeaders } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { request as httpGet } from 'undici'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { WebSocket, type RawData } from 'ws'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'
import { closed, collect, openSocket, startScriptedUpstream, turn, type ScriptedUpstream } from '../helpers/sockets.ts'

const wsUrl = (stack: Stack, path = '/v1/responses'): string => `${stack.proxyUrl.replace('http', 'ws')}${path}`
const auth = { authorization: 'Bearer sk-openai-test-key-0003', 'openai-beta': 'responses_websockets=2026-02-06' }

describe('Responses over WebSocket, through ctxgate to the mock', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ mock: { agentSteps: 2 } })
  })
  afterAll(() => stack.close())
  beforeEach(() => stack.mock.reset())

  it('forwards each response.create as the client sent it, previous_response_id included, with the handshake headers', async () => {
    const socket = await openSocket(wsUrl(stack), { ...auth, 'x-ctxgate-session': 'ws-one' })
    // With a prompt_cache_key of its own the request needs no edit (ctxgate would otherwise set one).
    const first = JSON.stringify({
      type: 'response.create',
      model: 'gpt-5',
      store: false,
      prompt_cache_key: 'thread-1',
      input: [{ type: 'message', role: 'user', content: 'Say hi' }],
    })
    const events = await turn(socket, first)
    expect(events.map((event) => event['type'])).toContain('response.output_text.delta')
    const completed = events.at(-1) as { type: string; response: { id: string } }
    expect(completed.type).toBe('response.completed')
    const second = JSON.stringify({
      type: 'response.create',
      model: 'gpt-5',
      store: false,
      prompt_cache_key: 'thread-1',
      previous_response_id: completed.response.id,
      input: [{ type: 'message', role: 'user', content: 'And again' }],
    })
    const again = await turn(socket, second)
    expect(again.at(-1)?.['type']).toBe('response.completed')
    socket.close()
    const sent = stack.mock.requests.filter((request) => request.method === 'WS')
    expect(sent.map((request) => request.body)).toEqual([first, second])
    expect(sent[0]?.url).toBe('/v1/responses')
    expect(sent[0]?.headers['authorization']).toBe(auth.authorization)
    expect(sent[0]?.headers['openai-beta']).toBe(auth['openai-beta'])
    expect(sent[0]?.headers['x-ctxgate-session']).toBeUndefined()
  })

  it('answers previous_response_not_found for an id that is not the socket latest, without calling the upstream', async () => {
    const socket = await openSocket(wsUrl(stack), auth)
    const events = await turn(socket, {
      type: 'response.create',
      model: 'gpt-5',
      store: false,
      previous_response_id: 'resp_unknown_1',
      input: [],
    })
    expect(events).toEqual([
      {
        type: 'error',
        status: 400,
        error: {
          type: 'invalid_request_error',
          code: 'previous_response_not_found',
          message: "Previous response with id 'resp_unknown_1' not found.",
          param: 'previous_response_id',
        },
      },
    ])
    // The socket stays usable.
    const next = await turn(socket, { type: 'response.create', model: 'gpt-5', store: false, input: 'hi' })
    expect(next.at(-1)?.['type']).toBe('response.completed')
    socket.close()
    expect(stack.mock.requests.filter((request) => request.method === 'WS')).toHaveLength(1)
  })

  it('drives the mock agent loop over the socket and records usage in metrics', async () => {
    const socket = await openSocket(wsUrl(stack), auth)
    const tools = [
      {
        type: 'function',
        name: 'exec_command',
        parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
      },
    ]
    const base = { type: 'response.create', model: 'gpt-5', store: false, prompt_cache_key: 'thread-2', tools }
    const requestsBefore = metricValue(
      await stack.app.registry.metrics(),
      'ctxgate_requests_total',
      'route="openai-responses-ws"',
    )
    const warm = await turn(socket, {
      ...base,
      input: [{ type: 'message', role: 'user', content: 'List files' }],
      generate: false,
    })
    let previous = String((warm.at(-1) as { response: { id: string } }).response.id)
    const calls: string[] = []
    for (let step = 0; step < 4; step++) {
      const pending =
        calls.length > 0 ? [{ type: 'function_call_output', call_id: calls.at(-1), output: 'x\n'.repeat(50) }] : []
      const events = await turn(socket, { ...base, previous_response_id: previous, input: pending })
      const done = events.at(-1) as { response: { id: string; output: { type: string; call_id?: string }[] } }
      previous = done.response.id
      const call = done.response.output.find((item) => item.type === 'function_call')
      if (!call) break
      calls.push(String(call.call_id))
    }
    socket.close()
    expect(calls).toHaveLength(2)
    const metrics = await stack.app.registry.metrics()
    expect(metricValue(metrics, 'ctxgate_requests_total', 'route="openai-responses-ws"') - requestsBefore).toBe(4)
    expect(metricValue(metrics, 'ctxgate_tokens_total', 'kind="output"')).toBeGreaterThan(0)
    const logs = requestLogs(stack).filter((line) => line['session'] === 'thread-2')
    expect(logs.map((line) => line['sentAs'])).toEqual(['as-sent', 'as-sent', 'as-sent', 'as-sent'])
    expect(logs.map((line) => line['turn'])).toEqual([1, 2, 3, 4])
  })

  it('ends a response cut by the upstream with an error event and a close, and sends nothing again', async () => {
    // Cut after the first content event: the held preamble has gone out with it by then.
    stack.mock.faults.push([{ kind: 'reset-mid-stream', afterFrames: 3 }])
    const socket = await openSocket(wsUrl(stack), auth)
    const received = collect(socket)
    socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-5', store: false, input: 'hi' }))
    const { code } = await closed(socket)
    expect(code).toBe(1011)
    const types = received.map((message) => (JSON.parse(message.text) as { type: string }).type)
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'error'])
    const last = JSON.parse(received.at(-1)?.text ?? '{}') as {
      status: number
      error: { code: string; message: string }
    }
    expect(last.status).toBe(502)
    expect(last.error.code).toBe('upstream_unreachable')
    expect(last.error.message).toContain('before the response completed')
    expect(stack.mock.requests.filter((request) => request.method === 'WS')).toHaveLength(1)
  })

  it('relays pings to the upstream and its pongs back', async () => {
    const socket = await openSocket(wsUrl(stack), auth)
    const pong = new Promise<string>((resolve) => socket.once('pong', (data: Buffer) => resolve(data.toString())))
    socket.ping('are-you-there')
    expect(await pong).toBe('are-you-there')
    socket.close()
  })

  it('relays a refused upgrade as the upstream answered it', async () => {
    await expect(openSocket(wsUrl(stack, '/v1/not-a-socket'), auth)).rejects.toThrow('refused with 404')
  })
})

describe('Responses over WebSocket, rewriting', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({
      config: {
        models: [{ match: '*', window: 6_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      },
    })
  })
  afterAll(() => stack.close())

  it('sends an edited request as the whole (edited) input, without previous_response_id', async () => {
    const socket = await openSocket(wsUrl(stack), auth)
    // Long enough that the first answer calibrates the estimator sensibly.
    const start = [{ type: 'message', role: 'user', content: `Start. ${'Read the files one by one. '.repeat(60)}` }]
    const first = await turn(socket, { type: 'response.create', model: 'gpt-5', store: false, input: start })
    const previous = (first.at(-1) as { response: { id: string } }).response.id
    const rounds = readRounds('call_', (index) => `line ${index} of a long file\n`)
    const events = await turn(socket, continuation(previous, rounds))
    expect(events.at(-1)?.['type']).toBe('response.completed')
    socket.close()
    const sent = stack.mock.requests.filter((request) => request.method === 'WS')
    const edited = JSON.parse(sent[1]?.body ?? '{}') as Record<string, unknown> & { input: Record<string, unknown>[] }
    expect(edited['type']).toBe('response.create')
    expect(edited['previous_response_id']).toBeUndefined()
    // The first user message, the first answer, then the new rounds, some of them cleared, and the system note.
    expect(edited.input).toHaveLength(2 + rounds.length + 1)
    expect(edited.input.filter((item) => item['role'] === 'developer')).toHaveLength(1)
    expect(edited.input[0]).toEqual(start[0])
    expect(edited.input[1]?.['type']).toBe('message')
    const shortened = edited.input.filter((item) => String(item['output'] ?? '').startsWith('[ctxgate'))
    expect(shortened.length).toBeGreaterThan(0)
    const log = requestLogs(stack).at(-1)
    expect(log?.['sentAs']).toBe('full-input')
  })
  it('keeps number literals a double cannot hold when it resends the whole edited input', async () => {
    const socket = await openSocket(wsUrl(stack), auth)
    const risky = '"metadata":{"big":9007199254740993,"huge":1e400},'
    const raw = (message: Record<string, unknown>): string => `{${risky}${JSON.stringify(message).slice(1)}`
    const start = [{ type: 'message', role: 'user', content: `Begin. ${'Check each file. '.repeat(80)}` }]
    const first = await turn(socket, raw({ type: 'response.create', model: 'gpt-5', store: false, input: start }))
    const previous = (first.at(-1) as { response: { id: string } }).response.id
    const rounds = Array.from({ length: 12 }, (_, index) => [
      { type: 'function_call', call_id: `call_n${index}`, name: 'read', arguments: '{}' },
      { type: 'function_call_output', call_id: `call_n${index}`, output: `row ${index} of a wide table\n`.repeat(80) },
    ]).flat()
    const message = {
      type: 'response.create',
      model: 'gpt-5',
      store: false,
      previous_response_id: previous,
      input: rounds,
    }
    const events = await turn(socket, raw(message))
    expect(events.at(-1)?.['type']).toBe('response.completed')
    socket.close()
    const sent = stack.mock.requests.filter((request) => request.method === 'WS').at(-1)?.body ?? ''
    expect(sent).not.toContain('previous_response_id')
    expect(sent).toContain('"metadata":{"big":9007199254740993,"huge":1e400}')
  })

  it('prevents a changed history: items read one by one from an indented, escaped message with a repeated key are resent as parsing it whole gave them', async () => {
    const socket = await openSocket(wsUrl(stack), auth)
    const start = [{ type: 'message', role: 'user', content: `Café / "quoted". ${'Open each file. '.repeat(80)}` }]
    // Indented, with escapes JSON.stringify would not write (as Python's json.dumps sends them).
    const written = JSON.stringify({ type: 'response.create', model: 'gpt-5', store: false, input: start }, null, 2)
      .replace('é', '\\u00e9')
      .replace(' / ', ' \\/ ')
    // A repeated key: JSON.parse keeps the last value, in the first one's place.
    const first = await turn(socket, `{"input": "not this one",${written.slice(1)}`)
    const previous = (first.at(-1) as { response: { id: string } }).response.id
    const rounds = readRounds('call_p', (index) => `entry ${index} of a long log\n`)
    const events = await turn(socket, continuation(previous, rounds))
    expect(events.at(-1)?.['type']).toBe('response.completed')
    socket.close()
    const sent = stack.mock.requests.filter((request) => request.method === 'WS').at(-1)?.body ?? ''
    expect(sent).not.toContain('previous_response_id')
    expect(sent).toContain(JSON.stringify(start[0]))
    expect(sent).not.toContain('not this one')
  })
})

describe('WebSocket mechanics, against a scripted upstream', () => {
  let upstream: ScriptedUpstream
  let stack: Stack
  beforeAll(async () => {
    upstream = await startScriptedUpstream()
    stack = await startStack({
      config: {
        upstreams: { anthropic: { url: upstream.url }, openai: { url: upstream.url } },
        auth: { tokens: ['client-token-0123456789'] },
        metrics: { token: 'admin-token-0123456789' },
      },
    })
  })
  afterAll(async () => {
    await stack?.close()
    await upstream.close()
  })
  afterEach(() => {
    for (const entry of upstream.sockets) entry.socket.terminate()
  })
  const clientAuth = { ...auth, 'x-ctxgate-auth': 'client-token-0123456789' }

  it('refuses an upgrade without x-ctxgate-auth and never reaches the upstream', async () => {
    const before = upstream.sockets.length
    await expect(openSocket(wsUrl(stack), auth)).rejects.toThrow('refused with 401')
    expect(upstream.sockets.length).toBe(before)
  })

  it('refuses a duplicated subprotocol list with 400 instead of crashing the process', async () => {
    const port = Number(new URL(stack.proxyUrl).port)
    const answer = await new Promise<string>((resolve, reject) => {
      const raw = connect(port, '127.0.0.1', () =>
        raw.write(
          'GET /v1/responses HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
            'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
            `Sec-WebSocket-Protocol: a, a\r\nx-ctxgate-auth: ${clientAuth['x-ctxgate-auth']}\r\n\r\n`,
        ),
      )
      let text = ''
      raw.on('data', (data: Buffer) => (text += data.toString()))
      raw.on('close', () => resolve(text))
      raw.on('error', reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toContain('x-ctxgate-error-code: CTXGATE_INVALID_REQUEST')
    const health = await httpGet(`${stack.proxyUrl}/healthz`)
    expect(health.statusCode).toBe(200)
    await health.body.dump()
  })

  it('relays every upstream message byte for byte, text and binary, parsable or not', async () => {
    const client = await openSocket(wsUrl(stack), clientAuth)
    const { socket, handshake } = await upstream.next()
    expect(handshake.headers['x-ctxgate-auth']).toBeUndefined()
    const messages = [
      '{ "type" : "response.created","response":{"id":"resp_1"} ,"sequence_number":0}',
      '{"type":"response.output_text.delta","delta":"h\\u00e9llo \u2603","sequence_number":1}',
      'not json at all',
      '{"type":"response.completed","response":{"id":"resp_1","output":[],"usage":{"input_tokens":5,"output_tokens":2}},"sequence_number":2}',
    ]
    socket.on('message', () => {
      for (const message of messages) socket.send(message)
      socket.send(Buffer.from([0, 1, 2, 255]), { binary: true })
    })
    const received = collect(client)
    client.send(JSON.stringify({ type: 'response.create', model: 'gpt-5', input: 'hi' }))
    await eventually(() => expect(received).toHaveLength(5))
    expect(received.slice(0, 4)).toEqual(messages.map((text) => ({ text, binary: false })))
    expect(received[4]?.binary).toBe(true)
    client.close()
  })

  it('forwards a frame ctxgate cannot parse untouched', async () => {
    const client = await openSocket(wsUrl(stack), clientAuth)
    const { socket } = await upstream.next()
    const got = new Promise<{ data: string; binary: boolean }>((resolve) =>
      socket.once('message', (data: RawData, binary: boolean) => resolve({ data: String(data), binary })),
    )
    client.send('{"type":"response.create", broken')
    expect(await got).toEqual({ data: '{"type":"response.create", broken', binary: false })
    client.close()
  })

  it('forwards a large response.create with one broken input item untouched, and the socket goes on', async () => {
    const client = await openSocket(wsUrl(stack), clientAuth)
    const { socket } = await upstream.next()
    const items = Array.from({ length: 60 }, (_, index) =>
      JSON.stringify({ type: 'message', content: 'x'.repeat(20_000), index }),
    )
    items[30] = '{"type":"message","content":tru}'
    const broken = `{"type":"response.create","model":"gpt-5","input":[${items.join(',')}]}`
    const received: string[] = []
    socket.on('message', (data: RawData) => received.push(String(data)))
    client.send(broken)
    await eventually(() => expect(received).toHaveLength(1))
    expect(received[0]).toBe(broken)
    client.send('{"type":"response.cancel"}')
    await eventually(() => expect(received).toEqual([broken, '{"type":"response.cancel"}']))
    client.close()
  })

  it('passes close codes both ways', async () => {
    const client = await openSocket(wsUrl(stack), clientAuth)
    const { socket } = await upstream.next()
    const upstreamSaw = closed(socket)
    client.close(4001, 'client done')
    expect(await upstreamSaw).toEqual({ code: 4001, reason: 'client done' })

    const second = await openSocket(wsUrl(stack), clientAuth)
    const { socket: secondUpstream } = await upstream.next()
    const clientSaw = closed(second)
    secondUpstream.close(4002, 'upstream done')
    expect(await clientSaw).toEqual({ code: 4002, reason: 'upstream done' })
  })

  it('relays upstream pings to the client', async () => {
    const client = await openSocket(wsUrl(stack), clientAuth)
    const { socket } = await upstream.next()
    const ping = new Promise<string>((resolve) => client.once('ping', (data: Buffer) => resolve(data.toString())))
    const pong = new Promise<string>((resolve) => socket.once('pong', (data: Buffer) => resolve(data.toString())))
    socket.ping('upstream-ping')
    expect(await ping).toBe('upstream-ping')
    expect(await pong).toBe('upstream-ping')
    client.close()
  })

  it('closes the upstream socket when the client leaves mid-response', async () => {
    const client = await openSocket(wsUrl(stack), clientAuth)
    const { socket } = await upstream.next()
    // The preamble is held until the next event: send one, so the client has something to leave after.
    socket.on('message', () => {
      socket.send('{"type":"response.created","response":{"id":"resp_2"}}')
      socket.send('{"type":"response.output_text.delta","delta":"Hi"}')
    })
    const upstreamClosed = closed(socket)
    client.once('message', () => client.terminate())
    client.send(JSON.stringify({ type: 'response.create', model: 'gpt-5', input: 'hi' }))
    expect((await upstreamClosed).code).toBe(1001)
    await eventually(() => expect(requestLogs(stack).some((line) => line['outcome'] === 'client_closed')).toBe(true))
  })

  it('bridges upgrades on other paths untouched, query string included', async () => {
    const client = await openSocket(wsUrl(stack, '/v1/realtime?model=gpt-realtime'), clientAuth)
    const { socket, handshake } = await upstream.next()
    expect(handshake.url).toBe('/v1/realtime?model=gpt-realtime')
    socket.on('message', (data: RawData) => socket.send(`echo:${String(data)}`))
    const received = collect(client)
    client.send('{"type":"session.update"}')
    await eventually(() => expect(received).toEqual([{ text: 'echo:{"type":"session.update"}', binary: false }]))
    client.close()
  })
})

describe('closing a socket when ctxgate shuts down', () => {
  it('closes an idle socket with 1001', async () => {
    const stack = await startStack()
    const client = await openSocket(wsUrl(stack), auth)
    const done = closed(client)
    await stack.close()
    expect((await done).code).toBe(1001)
    expect(client.readyState).toBe(WebSocket.CLOSED)
  })
})

/** Sum of a metric's samples whose labels contain `labels`. */
function metricValue(text: string, name: string, labels: string): number {
  let total = 0
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) && line.includes(labels)) total += Number(line.slice(line.lastIndexOf(' ') + 1))
  return total
}

describe('a WebSocket upgrade when the upstream cannot be reached', () => {
  let stack: Stack
  let deadUrl: string
  beforeAll(async () => {
    // A port that was just free and is closed again: connecting to it is refused.
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    deadUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    stack = await startStack({ config: { upstreams: { openai: { url: deadUrl } } } })
  })
  afterAll(() => stack.close())

  it('answers 502 in the OpenAI error shape with x-ctxgate-error-code, naming the API and not its address', async () => {
    const refusal = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        const socket = new WebSocket(wsUrl(stack), { headers: auth })
        socket.once('open', () => reject(new Error('the upgrade was accepted')))
        socket.once('unexpected-response', (_request, response) => {
          const chunks: Buffer[] = []
          response.on('data', (chunk: Buffer) => chunks.push(chunk))
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          )
        })
      },
    )
    expect(refusal.status).toBe(502)
    expect(refusal.headers['x-ctxgate-error-code']).toBe('CTXGATE_UPSTREAM_UNREACHABLE')
    const body = JSON.parse(refusal.body) as { error: { message: string; code: string } }
    expect(body.error.message).toBe('ctxgate could not open a WebSocket to the openai API: connection refused')
    const address = new URL(deadUrl).host
    expect(refusal.body).not.toContain(address)
    expect(refusal.body).not.toContain('127.0.0.1')
    await eventually(() =>
      expect(stack.logLines.some((line) => line.includes('websocket upstream failed') && line.includes(address))).toBe(
        true,
      ),
    )
  })
})

/** Twelve read calls and their outputs (80 lines each), as a continuation's new input items. */
function readRounds(callPrefix: string, line: (index: number) => string): Record<string, unknown>[] {
  return Array.from({ length: 12 }, (_, index) => [
    { type: 'function_call', call_id: `${callPrefix}${index}`, name: 'read', arguments: '{}' },
    { type: 'function_call_output', call_id: `${callPrefix}${index}`, output: line(index).repeat(80) },
  ]).flat()
}

/** A `response.create` continuing `previous` with new input items. */
function continuation(previous: string, input: Record<string, unknown>[]): Record<string, unknown> {
  return { type: 'response.create', model: 'gpt-5', store: false, previous_response_id: previous, input }
}
