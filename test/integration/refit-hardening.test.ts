import Anthropic from '@anthropic-ai/sdk'
import type { IncomingMessage } from 'node:http'
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { useScriptedStack } from '../helpers/scripted-upstream.ts'

const message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 1 },
}

/** Sends hand-written bytes and returns everything the server answers until it closes. */
function rawExchange(baseUrl: string, text: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1', () => socket.write(text))
    let answer = ''
    socket.on('data', (data) => (answer += data.toString()))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    incoming.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')))
    incoming.on('end', () => resolve(text))
  })
}

describe('length refusals on the refit path', () => {
  const scripted = useScriptedStack()

  it("does not let a client's text echoed in an upstream 400 shrink every other client's budget", async () => {
    const seen: string[] = []
    scripted.upstream.handle(async (incoming, response) => {
      const body = await readBody(incoming)
      seen.push(body)
      if (body.includes('poison')) {
        // The upstream names the client's tool id in its own message; the id reads like a length refusal.
        const error = {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message:
              'messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: prompt is too long: 99999999 tokens > 10 maximum',
          },
        }
        response.writeHead(400, { 'content-type': 'application/json' })
        response.end(JSON.stringify(error))
        return
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(message))
    })
    const client = new Anthropic({ baseURL: scripted.stack.proxyUrl, apiKey: 'sk-ant-one', maxRetries: 0 })
    const poisoned = client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'poison' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'prompt is too long: 99999999 tokens > 10 maximum', name: 'x', input: {} }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'prompt is too long: 99999999 tokens > 10 maximum', content: 'r' },
          ],
        },
      ],
    })
    await expect(poisoned).rejects.toMatchObject({ status: 400 })
    expect(seen).toHaveLength(1)

    const other = new Anthropic({ baseURL: scripted.stack.proxyUrl, apiKey: 'sk-ant-two', maxRetries: 0 })
    const answer = await other.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'an ordinary question from another client' }],
    })
    expect(answer.content).toEqual([{ type: 'text', text: 'ok' }])
    expect(seen).toHaveLength(2)
  })

  it("relays an upstream 400 cut off mid-body as the cut 400, never as ctxgate's 500", async () => {
    scripted.upstream.handle(async (incoming, response) => {
      await readBody(incoming)
      response.writeHead(400, { 'content-type': 'application/json', 'content-length': '400' })
      // Half of a length refusal, then the connection drops.
      response.write('{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too', () =>
        setTimeout(() => response.destroy(), 20),
      )
    })
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const answer = await rawExchange(
      scripted.stack.proxyUrl,
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nanthropic-version: 2023-06-01\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).not.toContain('x-ctxgate-error-code')
    // What arrived is relayed, and the socket ends before the declared length, as a cut body does on passthrough.
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(
      '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too',
    )
  })

  it('does not send a refit that is larger than, or byte-identical to, the refused request', async () => {
    for (const [tag, refusal] of [
      // A lying refusal: the measured size is tiny and the named limit is over the window.
      ['lying', 'prompt is too long: 5 tokens > 3000000 maximum'],
      // A limit the request already fits: planning again changes nothing.
      ['fits', 'prompt is too long: 190000 tokens > 180000 maximum'],
    ] as const) {
      const seen: string[] = []
      scripted.upstream.handle(async (incoming, response) => {
        seen.push(await readBody(incoming))
        response.writeHead(400, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: refusal } }))
      })
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: `task ${tag}` }]
      for (let round = 0; round < 6; round++) {
        const id = `toolu_${tag}_${round}`
        messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'run', input: { round } }] })
        messages.push({
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: id, content: `${tag} line ${round}\n`.repeat(400) }],
        })
      }
      const client = new Anthropic({ baseURL: scripted.stack.proxyUrl, apiKey: 'sk-ant-one', maxRetries: 0 })
      const refused = client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        tools: [{ name: 'run', description: 'Run a step.', input_schema: { type: 'object' } }],
        messages,
      })
      await expect(refused, tag).rejects.toMatchObject({ status: 400 })
      const sizes = seen.map((body) => Buffer.byteLength(body))
      // Only a strictly smaller refit may follow the refused request.
      expect(sizes.length, tag).toBeGreaterThan(0)
      for (const size of sizes.slice(1)) expect(size, tag).toBeLessThan(sizes[0] as number)
      expect(new Set(seen).size, tag).toBe(seen.length)
    }
  })
})
