import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicBody, buildMessages, type Json, type Step } from '../helpers/conversations.ts'
import { startScriptedStack } from '../helpers/scripted-upstream.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

const adminToken = 'admin-token-0123456789abcdef'
const tokenA = 'tenant-a-token-0123456789abcdef'
const tokenB = 'tenant-b-token-0123456789abcdef'

function post(stack: Stack, body: Json, headers: Record<string, string>) {
  return request(`${stack.proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  })
}

describe('calibration across clients', () => {
  it('prevents one client’s length refusal from making ctxgate refuse every other client', async () => {
    const scripted = await startScriptedStack()
    let refused = false
    scripted.upstream.handle((_request, response) => {
      // The first call is refused with an absurd limit; everything after it is answered.
      if (!refused) {
        refused = true
        response.writeHead(400, { 'content-type': 'application/json' })
        response.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'invalid_request_error', message: 'prompt is too long: 150000 tokens > 1000 maximum' },
          }),
        )
        return
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 2_500, output_tokens: 1 },
        }),
      )
    })
    // About 2,500 tokens in one message: nothing ctxgate could cut if it believed a 1,000-token limit.
    const body = (text: string): Json => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: `${text} ${'lorem ipsum dolor sit amet '.repeat(400)}` }],
    })
    try {
      const first = await post(scripted.stack, body('attacker'), { 'x-ctxgate-session': 'attacker' })
      await first.body.dump()
      expect(first.statusCode).toBe(400)
      for (const [session, text] of [
        ['victim', 'victim'],
        ['attacker', 'attacker again'],
      ] as const) {
        const answer = await post(scripted.stack, body(text), { 'x-ctxgate-session': session })
        const text2 = await answer.body.text()
        expect(answer.headers['x-ctxgate-error-code'], session).toBeUndefined()
        expect(answer.statusCode, `${session}: ${text2.slice(0, 200)}`).toBe(200)
      }
    } finally {
      await scripted.close()
    }
  })
})

describe('session state with client authentication', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({
      mock: { window: 200_000 },
      config: { metrics: { token: adminToken }, auth: { tokens: [tokenA, tokenB] } },
    })
  })
  afterAll(() => stack.close())

  const round = (size: number): Step => ({
    kind: 'round',
    calls: 2,
    sizes: [size, size, size],
    outputKind: 'log',
    thinking: false,
    extraField: false,
  })

  it('prevents a client that reuses another’s session id from poisoning its frozen decisions or totals', async () => {
    const messages = buildMessages(Array.from({ length: 8 }, () => round(2_000)))
    const headers = { 'x-ctxgate-session': 'guessable' }
    // Tenant B forces edits onto the conversation with a tiny budget: they would be frozen for its key.
    const poison = await post(stack, anthropicBody(messages), {
      ...headers,
      'x-ctxgate-auth': tokenB,
      'x-ctxgate-budget': '8000',
    })
    await poison.body.dump()
    expect(poison.statusCode).toBe(200)
    expect(stack.mock.requests.at(-1)?.body).toContain('ctxgate')
    // Tenant A's identical conversation fits its budget: it must go out with no edit made for B.
    const victim = await post(stack, anthropicBody(messages), { ...headers, 'x-ctxgate-auth': tokenA })
    await victim.body.dump()
    expect(victim.statusCode).toBe(200)
    expect(stack.mock.requests.at(-1)?.body).not.toContain('ctxgate')

    const listed = (await (
      await request(`${stack.proxyUrl}/ctxgate/sessions`, { headers: { authorization: `Bearer ${adminToken}` } })
    ).body.json()) as { sessions: { sessionId: string; turns: number }[] }
    const ids = listed.sessions.map((session) => session.sessionId)
    expect(ids.filter((id) => id.endsWith(':guessable'))).toHaveLength(2)
    for (const session of listed.sessions) expect(session.turns).toBe(1)
    // The tenant part is a hash prefix, never the token.
    for (const id of ids) for (const token of [tokenA, tokenB]) expect(id).not.toContain(token.slice(0, 8))
  })
})
