import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RawData } from 'ws'
import { startStack, type Stack } from '../helpers/stack.ts'
import { collect, openSocket, startScriptedUpstream, turn, type ScriptedUpstream } from '../helpers/sockets.ts'

let upstream: ScriptedUpstream
let stack: Stack
beforeAll(async () => {
  upstream = await startScriptedUpstream()
  stack = await startStack({ config: { upstreams: { openai: { url: upstream.url } } } })
})
afterAll(async () => {
  await stack?.close()
  await upstream?.close()
})

describe('a WebSocket response.create whose model is an object', () => {
  it('does not close the socket with 1011 "ctxgate error": the message goes on as sent, and a log line says why', async () => {
    const socket = await openSocket(`${stack.proxyUrl.replace('http', 'ws')}/v1/responses`, {
      authorization: 'Bearer sk-test',
    })
    const far = await upstream.next()
    const forwarded: string[] = []
    far.socket.on('message', (data: RawData) => {
      const text = String(data)
      forwarded.push(text)
      const model = (JSON.parse(text) as { model: unknown }).model
      const response = {
        id: `resp_${forwarded.length}`,
        model,
        output: [],
        usage: { input_tokens: 3, output_tokens: 1 },
      }
      far.socket.send(JSON.stringify({ type: 'response.completed', response }))
    })
    const closes: number[] = []
    socket.on('close', (code) => closes.push(code))
    collect(socket)
    const message = {
      type: 'response.create',
      model: { name: 'gpt-4.1' },
      input: [{ type: 'message', role: 'user', content: 'hi' }],
    }
    const events = await turn(socket, message)
    expect(events.at(-1)?.['type']).toBe('response.completed')
    const again = await turn(socket, { ...message, previous_response_id: 'resp_1', input: [] })
    expect(again.at(-1)?.['type']).toBe('response.completed')
    expect(JSON.parse(forwarded[0]!)).toEqual(message)
    // An object without a usable toString, on the path that answers previous_response_not_found itself.
    const unknown = await turn(socket, {
      type: 'response.create',
      model: { toString: 1 },
      store: false,
      previous_response_id: 'resp_never',
      input: [],
    })
    expect(unknown.at(-1)).toMatchObject({ type: 'error', error: { code: 'previous_response_not_found' } })
    const hostile = { type: 'response.create', model: { toString: 1, valueOf: 2 }, input: 'hi' }
    expect((await turn(socket, hostile)).at(-1)?.['type']).toBe('response.completed')
    expect(closes).toEqual([])
    const lines = stack.logLines.map((line) => JSON.parse(line) as Record<string, unknown>)
    for (const turnId of ['ws1:1', 'ws1:2', 'ws1:3', 'ws1:4'])
      expect(lines.some((line) => line['reqId'] === turnId && line['msg'] === 'request')).toBe(true)
    socket.close()
  })
})
