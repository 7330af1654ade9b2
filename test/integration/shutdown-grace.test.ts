import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import type { RawData } from 'ws'
import { eventually, startStack } from '../helpers/stack.ts'
import { closed, collect, openSocket, startScriptedUpstream } from '../helpers/sockets.ts'

describe('the end of the shutdown grace', () => {
  it('does not cut an SSE stream silently: the client gets an error event in its provider format first', async () => {
    const stack = await startStack({ config: { log: { level: 'silent' } } })
    try {
      const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-shutdown', maxRetries: 0 })
      const stream = await client.messages.create(
        { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
        { headers: { 'x-mock-chunk-delay-ms': '300' } },
      )
      const seen: string[] = []
      const reading = (async () => {
        for await (const event of stream) {
          seen.push(event.type)
          if (seen.length === 1) {
            void stack.app.server.close()
            const cut = await stack.app.endInFlight()
            expect(cut.streams).toBe(1)
          }
        }
      })()
      const error = await reading.then(
        () => undefined,
        (raised: unknown) => raised,
      )
      expect(error).toBeInstanceOf(Anthropic.APIError)
      expect(String((error as Error).message)).toContain('shutting down')
      expect(seen[0]).toBe('message_start')
    } finally {
      await stack.close().catch(() => undefined)
    }
  })

  it('does not drop a busy WebSocket with 1006: an error event for its response, then a 1001 close frame', async () => {
    const upstream = await startScriptedUpstream()
    const stack = await startStack({
      config: { log: { level: 'silent' }, upstreams: { openai: { url: upstream.url } } },
    })
    try {
      const socket = await openSocket(`${stack.proxyUrl.replace('http', 'ws')}/v1/responses`, {
        authorization: 'Bearer sk-test',
      })
      const far = await upstream.next()
      const forwarded: string[] = []
      // The upstream starts the response and then never finishes it.
      far.socket.on('message', (data: RawData) => {
        forwarded.push(String(data))
        far.socket.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_1' } }))
        far.socket.send(JSON.stringify({ type: 'response.output_text.delta', delta: 'Hel' }))
      })
      const received = collect(socket)
      const ended = closed(socket)
      socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input: 'hi' }))
      await eventually(() => expect(received.length).toBeGreaterThanOrEqual(2))
      void stack.app.server.close()
      const cut = await stack.app.endInFlight()
      expect(cut.sockets).toBe(1)
      const { code } = await ended
      expect(code).toBe(1001)
      const last = JSON.parse(received.at(-1)?.text ?? '{}') as { type: string; error?: { message: string } }
      expect(last.type).toBe('error')
      expect(last.error?.message).toContain('shutting down')
    } finally {
      await stack.close().catch(() => undefined)
      await upstream.close()
    }
  })
})
