import { describe, expect, it } from 'vitest'
import type { RelayedUsage } from '../../src/stream/relay-response.ts'
import type { UpstreamReply } from '../../src/upstream/send-with-retries.ts'
import { useRelayToClient } from '../helpers/relay-to-client.ts'

/** An answer already read whole: its one chunk, then the end (chunked: the client knows it has it all only at the end). */
function replyOf(contentType: string, body: string): UpstreamReply {
  return {
    status: 200,
    headers: { 'content-type': contentType },
    firstChunk: Buffer.from(body),
    rest: { next: () => Promise.resolve({ value: undefined, done: true }), takeQueued: () => [] },
    attempts: 1,
    exhausted: false,
    firstByteMs: 1,
  }
}

/** Usage whose recording never finishes (a stalled store): `settle` is called, and never resolves. */
function stalledUsage(): RelayedUsage & { readonly settleCalls: () => number } {
  let calls = 0
  return {
    onEvent: () => undefined,
    complete: () => true,
    get settled() {
      return calls > 0
    },
    settle: () => {
      calls++
      return new Promise<void>(() => undefined)
    },
    settleCalls: () => calls,
  }
}

const { relayed } = useRelayToClient()

async function relayThrough(reply: UpstreamReply, usage: RelayedUsage, settleFirst: boolean): Promise<string> {
  return (await relayed(reply, usage, settleFirst)).body.toString()
}

describe('usage recorded after the last byte (a process-local store)', () => {
  it('a JSON answer reaches the client whole while its usage is still being recorded', async () => {
    const usage = stalledUsage()
    const body = JSON.stringify({ id: 'msg_1', usage: { input_tokens: 12, output_tokens: 3 } })
    expect(await relayThrough(replyOf('application/json', body), usage, false)).toBe(body)
    expect(usage.settleCalls()).toBe(1)
  })

  it('an event stream reaches the client whole while its usage is still being recorded', async () => {
    const usage = stalledUsage()
    const stream = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    expect(await relayThrough(replyOf('text/event-stream', stream), usage, false)).toBe(stream)
    expect(usage.settleCalls()).toBe(1)
  })

  it('with a shared store the answer still waits for the recording (the next request may reach another replica)', async () => {
    const usage = stalledUsage()
    const body = JSON.stringify({ id: 'msg_2', usage: { input_tokens: 1, output_tokens: 1 } })
    const outcome = await Promise.race([
      relayThrough(replyOf('application/json', body), usage, true),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 300)),
    ])
    expect(outcome).toBe('still waiting')
    expect(usage.settleCalls()).toBe(1)
  })
})
