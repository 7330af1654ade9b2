import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebSocket } from 'ws'
import { openSocket, turn } from '../helpers/sockets.ts'
import { startStack, type Stack } from '../helpers/stack.ts'
import { socketMemoryBudget } from '../../src/websocket/memory-budget.ts'

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

/** Sends all but the last 100 bytes of `text` as an unfinished fragment; `finish` sends the rest and resolves with the response's events. */
function startFragmented(socket: WebSocket, text: string): { finish(): Promise<Record<string, unknown>[]> } {
  socket.send(text.slice(0, -100), { fin: false })
  return {
    finish() {
      const events = new Promise<Record<string, unknown>[]>((resolve) => {
        const seen: Record<string, unknown>[] = []
        socket.on('message', (data) => {
          const event = JSON.parse(String(data)) as Record<string, unknown>
          seen.push(event)
          if (event['type'] === 'response.completed' || event['type'] === 'error') resolve(seen)
        })
      })
      socket.send(text.slice(-100), { fin: true })
      return events
    },
  }
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 200 && !(await check()); tries++) await new Promise((resolve) => setTimeout(resolve, 10))
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
    expect(await metric(stack, 'ctxgate_websocket_memory_budget_bytes')).toBe(socketMemoryBudget(stack.config).total)
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
    // Another socket's large message holds 700 KB of the 1 MiB allowance while its last fragment is still to come.
    const holder = await openSocket(url, auth)
    const held = startFragmented(holder, largeCreate(10, 700_000))
    await until(async () => (await metric(stack, 'ctxgate_websocket_preparing_bytes')) > 0)
    // A few bytes, but ctxgate prepares the whole conversation (1.2 MB) to send it: it waits for the place.
    let answered = false
    const next = turn(socket, {
      type: 'response.create',
      model: 'gpt-4.1',
      store: false,
      previous_response_id: previous,
      input: [{ type: 'message', role: 'user', content: 'and then?' }],
    }).then((events) => ((answered = true), events))
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(answered).toBe(false)
    const heldEvents = held.finish()
    expect((await next).at(-1)?.['type']).toBe('response.completed')
    expect((await heldEvents).at(-1)?.['type']).toBe('response.completed')
    expect(await metric(stack, 'ctxgate_websocket_preparing_bytes')).toBe(0)
    socket.close()
    holder.close()
  })

  it('prevents receiving many large messages at once: a large message is not read until it has its place, and a slow sender gives its place up after the grace', async () => {
    const url = `${stack.proxyUrl.replace('http', 'ws')}/v1/responses`
    const holder = await openSocket(url, auth)
    const other = await openSocket(url, auth)
    const held = startFragmented(holder, largeCreate(11, 700_000))
    await until(async () => (await metric(stack, 'ctxgate_websocket_preparing_bytes')) > 0)
    const paused = await metric(stack, 'ctxgate_websocket_reads_paused_total')
    const started = performance.now()
    // 700 KB beside the held 700 KB would pass the 1 MiB allowance: this socket stops reading until the holder's grace (2 s) is over.
    const answer = await turn(other, largeCreate(12, 700_000))
    expect(answer.at(-1)?.['type']).toBe('response.completed')
    expect(performance.now() - started).toBeGreaterThan(1_500)
    expect(await metric(stack, 'ctxgate_websocket_reads_paused_total')).toBe(paused + 1)
    // The slow sender's message still goes through, asking for its place again once whole.
    expect((await held.finish()).at(-1)?.['type']).toBe('response.completed')
    expect(await metric(stack, 'ctxgate_websocket_preparing_bytes')).toBe(0)
    holder.close()
    other.close()
  })
})
