import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSocket, turn } from '../helpers/sockets.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

const auth = { authorization: 'Bearer sk-openai-test-key-0003', 'openai-beta': 'responses_websockets=2026-02-06' }
const mib = 1024 * 1024

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
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `))
  return Number(line?.split(' ')[1] ?? Number.NaN)
}

describe('WebSocket preparations beside the histories kept', () => {
  let stack: Stack
  beforeAll(async () => {
    // Room to prepare a 300 KB conversation on the main thread (about 3.6 MiB), not a 400 KB one (4.8 MiB).
    stack = await startStack({ config: { websocket: { maxHistoryBytes: 4 * mib } } })
  })
  afterAll(() => stack.close())

  it('prevents RSS past websocket.maxHistoryBytes by admission: a conversation too large to prepare beside the histories goes as the client sent it, is counted and logged, and its history is kept', async () => {
    const url = `${stack.proxyUrl.replace('http', 'ws')}/v1/responses`
    const socket = await openSocket(url, auth)
    const large = largeCreate(1, 400_000)
    const first = await turn(socket, large)
    expect(first.at(-1)?.['type']).toBe('response.completed')
    expect(stack.mock.requests.at(-1)?.body).toBe(large)
    expect(await metric(stack, 'ctxgate_websocket_preparations_refused_total')).toBe(1)
    expect(await metric(stack, 'ctxgate_websocket_preparation_reserved_bytes')).toBe(0)
    // The history was kept: a continuation is still known (and, as large, still not prepared).
    const previous = (first.at(-1) as { response: { id: string } }).response.id
    const next = await turn(socket, {
      type: 'response.create',
      model: 'gpt-4.1',
      store: false,
      previous_response_id: previous,
      input: [{ type: 'message', role: 'user', content: 'and then?' }],
    })
    expect(next.at(-1)?.['type']).toBe('response.completed')
    expect(await metric(stack, 'ctxgate_websocket_preparations_refused_total')).toBe(2)
    await eventually(() => {
      const turns = requestLogs(stack).filter((entry) => entry['method'] === 'WS')
      expect(turns.map((entry) => entry['failOpen'])).toEqual(['websocket_memory', 'websocket_memory'])
    })
    expect(stack.logLines.filter((line) => line.includes('too large to prepare beside the histories'))).toHaveLength(1)
    socket.close()
    await eventually(async () => expect(await metric(stack, 'ctxgate_websocket_history_bytes')).toBe(0))
  })

  it('prepares a conversation that fits beside the histories as before', async () => {
    const url = `${stack.proxyUrl.replace('http', 'ws')}/v1/responses`
    const socket = await openSocket(url, auth)
    const before = await metric(stack, 'ctxgate_websocket_preparations_refused_total')
    const answer = await turn(socket, largeCreate(2, 300_000))
    expect(answer.at(-1)?.['type']).toBe('response.completed')
    expect(await metric(stack, 'ctxgate_websocket_preparations_refused_total')).toBe(before)
    await eventually(() => {
      const last = requestLogs(stack)
        .filter((entry) => entry['method'] === 'WS')
        .at(-1)
      expect(last?.['failOpen']).toBeUndefined()
      expect(last?.['rewrite']).toBeDefined()
    })
    socket.close()
  })
})
