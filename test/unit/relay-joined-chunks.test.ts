import type { EventSourceMessage } from 'eventsource-parser'
import { describe, expect, it } from 'vitest'
import type { RelayedUsage } from '../../src/stream/relay-response.ts'
import { ResponseBody } from '../../src/upstream/exchange.ts'
import type { UpstreamReply } from '../../src/upstream/send-with-retries.ts'
import { useRelayToClient } from '../helpers/relay-to-client.ts'

/** A short Messages stream as the fake upstream sends it: an event per chunk, twenty of them. */
function streamChunks(): Buffer[] {
  const event = (type: string, data: object) =>
    Buffer.from(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  return [
    event('message_start', { message: { id: 'msg_1', usage: { input_tokens: 12, output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ...Array.from({ length: 16 }, (_, index) =>
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `word${index} ` } }),
    ),
    event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 17 } }),
    event('message_stop', {}),
  ]
}

/** An answer whose body arrived whole before the relay read it: the first chunk read, the rest waiting in the body. */
function arrivedWhole(contentType: string, chunks: readonly Buffer[]): UpstreamReply {
  const rest = new ResponseBody()
  for (const chunk of chunks.slice(1)) rest.push(chunk)
  rest.end()
  return {
    status: 200,
    headers: { 'content-type': contentType },
    firstChunk: chunks[0] ?? null,
    rest,
    attempts: 1,
    exhausted: false,
    firstByteMs: 1,
  }
}

/** Usage that sees every event and records at once. */
function seeingUsage(): RelayedUsage & { readonly events: EventSourceMessage[] } {
  const events: EventSourceMessage[] = []
  let settled = false
  return {
    events,
    onEvent: (event) => events.push(event),
    complete: () => events.some((event) => event.event === 'message_delta'),
    get settled() {
      return settled
    },
    settle: () => {
      settled = true
      return Promise.resolve()
    },
  }
}

const { relayed } = useRelayToClient()

describe('an answer that arrived in one socket read', () => {
  it('goes to the client in one write, byte for byte, and the usage reader still sees every event', async () => {
    const chunks = streamChunks()
    const usage = seeingUsage()
    const { body, writes } = await relayed(arrivedWhole('text/event-stream', chunks), usage, false)
    expect(body.equals(Buffer.concat(chunks))).toBe(true)
    expect(writes).toBe(1)
    expect(usage.events.map((event) => event.event)).toEqual(
      chunks.map((chunk) => /^event: (\w+)/.exec(chunk.toString())?.[1]),
    )
  })

  it('goes chunk by chunk with a shared store: what precedes the usage reaches the client while it is recorded', async () => {
    const chunks = streamChunks()
    // A store that never answers: the chunk completing the usage (message_delta) waits for it for good.
    const stalled: RelayedUsage = { ...seeingUsage(), settle: () => new Promise<void>(() => undefined) }
    const deltaAt = chunks.findIndex((chunk) => chunk.toString().startsWith('event: message_delta'))
    const before = Buffer.concat(chunks.slice(0, deltaAt))
    const { body, writes } = await relayed(arrivedWhole('text/event-stream', chunks), stalled, true, before.length)
    expect(body.equals(before)).toBe(true)
    expect(writes).toBe(deltaAt)
  })

  it('joins only short chunks: a large answer’s 16 KiB chunks (TLS records) go as they came, without a copy', async () => {
    const chunks = Array.from({ length: 6 }, (_, index) => Buffer.alloc(16 * 1024, String.fromCharCode(97 + index)))
    const { body, writes } = await relayed(arrivedWhole('application/octet-stream', chunks), seeingUsage(), false)
    expect(body.equals(Buffer.concat(chunks))).toBe(true)
    expect(writes).toBe(chunks.length)
  })

  it('joins no more than 32 KiB of short chunks into one write', async () => {
    const chunks = Array.from({ length: 20 }, (_, index) => Buffer.alloc(3 * 1024, String.fromCharCode(97 + index)))
    const { body, writes } = await relayed(arrivedWhole('application/octet-stream', chunks), seeingUsage(), false)
    expect(body.equals(Buffer.concat(chunks))).toBe(true)
    // 3 KiB chunks, 32 KiB at most per write: ten per write.
    expect(writes).toBe(2)
  })

  it('joins a JSON answer’s chunks too', async () => {
    const json = Buffer.from(JSON.stringify({ id: 'msg_2', content: [{ type: 'text', text: 'x'.repeat(3000) }] }))
    const chunks = [json.subarray(0, 1000), json.subarray(1000, 2000), json.subarray(2000)]
    const { body, writes } = await relayed(arrivedWhole('application/json', chunks), seeingUsage(), false)
    expect(body.equals(json)).toBe(true)
    expect(writes).toBe(1)
  })
})
