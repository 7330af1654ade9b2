import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSocket, turn } from '../helpers/sockets.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

const auth = { authorization: 'Bearer sk-openai-test-key-0003', 'openai-beta': 'responses_websockets=2026-02-06' }

/** A response.create of about `bytes` bytes of tool output. */
function largeCreate(seed: number, bytes: number): string {
  const input: unknown[] = [{ type: 'message', role: 'user', content: `task ${seed}` }]
  for (let index = 0; index * 20_000 < bytes; index++) {
    const callId = `call_${seed}_${index}`
    input.push({ type: 'function_call', call_id: callId, name: 'read_file', arguments: `{"path":"f${index}.ts"}` })
    input.push({ type: 'function_call_output', call_id: callId, output: `${seed}:${index} `.padEnd(20_000, 'x') })
  }
  return JSON.stringify({ type: 'response.create', model: 'gpt-4.1', store: false, input })
}

async function metric(stack: Stack, name: string): Promise<number> {
  const text = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
  return Number(
    text
      .split('\n')
      .find((line) => line.startsWith(`${name} `))
      ?.split(' ')[1] ?? Number.NaN,
  )
}

describe('large WebSocket messages held for preparation', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ config: { websocket: { maxPreparingBytes: 1_048_576 } } })
  })
  afterAll(() => stack.close())

  it('prevents unbounded memory: sockets stop reading at websocket.maxPreparingBytes, and every turn still completes', async () => {
    expect(await metric(stack, 'ctxgate_websocket_preparing_bytes_budget')).toBe(1_048_576)
    const url = `${stack.proxyUrl.replace('http', 'ws')}/v1/responses`
    const sockets = await Promise.all(Array.from({ length: 4 }, () => openSocket(url, auth)))
    const answers = await Promise.all(sockets.map((socket, index) => turn(socket, largeCreate(index, 700_000))))
    for (const events of answers) expect(events.at(-1)?.['type']).toBe('response.completed')
    expect(await metric(stack, 'ctxgate_websocket_reads_paused_total')).toBeGreaterThanOrEqual(1)
    expect(await metric(stack, 'ctxgate_websocket_preparing_bytes')).toBe(0)
    // Reading resumed: the same sockets take another turn.
    const again = await turn(sockets[0] as NonNullable<(typeof sockets)[0]>, {
      type: 'response.create',
      model: 'gpt-4.1',
      store: false,
      input: 'once more',
    })
    expect(again.at(-1)?.['type']).toBe('response.completed')
    for (const socket of sockets) socket.close()
  })

  it('prevents unbounded preparation: a short message that continues a long conversation waits for the allowance like a long one', async () => {
    const url = `${stack.proxyUrl.replace('http', 'ws')}/v1/responses`
    const socket = await openSocket(url, auth)
    const first = await turn(socket, largeCreate(9, 1_200_000))
    expect(first.at(-1)?.['type']).toBe('response.completed')
    const previous = (first.at(-1) as { response: { id: string } }).response.id
    const paused = await metric(stack, 'ctxgate_websocket_reads_paused_total')
    // A few bytes, but ctxgate prepares the whole conversation (1.2 MB, past the 1 MiB allowance) to send it.
    const next = await turn(socket, {
      type: 'response.create',
      model: 'gpt-4.1',
      store: false,
      previous_response_id: previous,
      input: [{ type: 'message', role: 'user', content: 'and then?' }],
    })
    expect(next.at(-1)?.['type']).toBe('response.completed')
    expect(await metric(stack, 'ctxgate_websocket_reads_paused_total')).toBe(paused + 1)
    expect(await metric(stack, 'ctxgate_websocket_preparing_bytes')).toBe(0)
    socket.close()
  })
})
