import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSocket, turn } from '../helpers/sockets.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

/** The SDKs' own fetch, wrapped so the bodies they send are kept byte for byte before they reach ctxgate. */
const sdkFetch = globalThis.fetch

function recordingFetch(sent: string[]): typeof sdkFetch {
  return async (input, init) => {
    if (typeof init?.body === 'string') sent.push(init.body)
    return sdkFetch(input, init)
  }
}

// Long enough that ctxgate would place a cache marker, with a tool round it could clear.
const longLog = 'compiling module 42 of 97: ok, 3 warnings about unused imports in the parser. '.repeat(120)
const anthropicRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  system: 'You are a build assistant.',
  tools: [{ name: 'bash', description: 'Run a shell command', input_schema: { type: 'object' as const } }],
  messages: [
    { role: 'user' as const, content: 'Build the project and tell me what failed.' },
    {
      role: 'assistant' as const,
      content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'bash', input: { command: 'make' } }],
    },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: longLog }] },
  ],
}

async function upstreamBodiesThrough(stack: Stack): Promise<{ sent: string[]; received: string[] }> {
  stack.mock.reset()
  const sent: string[] = []
  const anthropic = new Anthropic({
    baseURL: stack.proxyUrl,
    apiKey: 'sk-ant-test',
    maxRetries: 0,
    fetch: recordingFetch(sent),
  })
  await anthropic.messages.create(anthropicRequest)
  await anthropic.messages.create({ ...anthropicRequest, stream: true }).then(async (stream) => {
    for await (const _event of stream);
  })
  const openai = new OpenAI({
    baseURL: `${stack.proxyUrl}/v1`,
    apiKey: 'sk-test',
    maxRetries: 0,
    fetch: recordingFetch(sent),
  })
  const chat = await openai.chat.completions.create({
    model: 'gpt-4o',
    stream: true,
    messages: [{ role: 'user', content: `Summarize this log: ${longLog}` }],
  })
  for await (const _chunk of chat);
  await openai.responses.create({ model: 'gpt-4o', input: [{ role: 'user', content: `Read this: ${longLog}` }] })
  const http = stack.mock.requests.filter((recorded) => recorded.method === 'POST').map((recorded) => recorded.body)
  return { sent, received: http }
}

describe('the holdout: a control session reaches the upstream exactly as the client sent it', () => {
  let control: Stack
  let treated: Stack
  beforeAll(async () => {
    ;[control, treated] = await Promise.all([
      startStack({ config: { rewrite: { holdout: 1 } } }),
      startStack({ config: { rewrite: { holdout: 0 } } }),
    ])
  })
  afterAll(() => Promise.all([control.close(), treated.close()]))

  it('through the official SDKs (Messages, Messages streamed, Chat streamed, Responses): the same bytes', async () => {
    const { sent, received } = await upstreamBodiesThrough(control)
    expect(sent).toHaveLength(4)
    expect(received).toEqual(sent)
  })

  it('the same requests outside the control arm are changed (markers, cache key, usage option): the test can tell', async () => {
    const { sent, received } = await upstreamBodiesThrough(treated)
    expect(received).toHaveLength(4)
    expect(received.filter((body, index) => body !== sent[index]).length).toBeGreaterThanOrEqual(3)
  })

  it('over the Responses WebSocket: each response.create as sent, previous_response_id included', async () => {
    for (const [stack, same] of [
      [control, true],
      [treated, false],
    ] as const) {
      stack.mock.reset()
      const socket = await openSocket(`${stack.proxyUrl.replace('http', 'ws')}/v1/responses`, {
        authorization: 'Bearer sk-openai-test-key-0003',
        'openai-beta': 'responses_websockets=2026-02-06',
      })
      const first = JSON.stringify({
        type: 'response.create',
        model: 'gpt-5',
        store: false,
        input: [{ type: 'message', role: 'user', content: `Read this: ${longLog}` }],
      })
      const events = await turn(socket, first)
      const id = (events.at(-1) as { response: { id: string } }).response.id
      const second = JSON.stringify({
        type: 'response.create',
        model: 'gpt-5',
        store: false,
        previous_response_id: id,
        input: [{ type: 'message', role: 'user', content: 'And the warnings?' }],
      })
      await turn(socket, second)
      socket.close()
      const received = stack.mock.requests.filter((recorded) => recorded.method === 'WS').map((r) => r.body)
      if (same) expect(received).toEqual([first, second])
      else expect(received).not.toEqual([first, second])
    }
  })

  it('control sessions are metered like the rest: turns, billed input and the arm in /ctxgate/sessions', async () => {
    const answer = await request(`${control.proxyUrl}/ctxgate/sessions`)
    const { sessions } = (await answer.body.json()) as {
      sessions: { arm?: string; turns: number; billedTokens: number; unmeteredTurns: number }[]
    }
    expect(sessions.length).toBeGreaterThan(0)
    for (const session of sessions) expect(session.arm).toBe('control')
    expect(sessions.reduce((sum, session) => sum + session.turns, 0)).toBeGreaterThanOrEqual(4)
    // The Chat stream asked for no usage, and a control request gets none added: its turn is unmetered.
    const metered = sessions.filter((session) => session.unmeteredTurns === 0)
    expect(metered.length).toBe(sessions.length - 1)
    expect(metered.every((session) => session.billedTokens > 0)).toBe(true)
  })
})

describe('the holdout at 0.5: sessions split between the arms, compared once finished', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ config: { rewrite: { holdout: 0.5 }, sessions: { idleTtlMs: 1_000 } } })
  })
  afterAll(() => stack.close())

  it('120 sessions split within binomial noise, and the comparison shows both arms with their sizes', async () => {
    const sessions = 120
    for (let index = 0; index < sessions; index++) {
      const answer = await request(`${stack.proxyUrl}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'x-api-key': 'sk-ant-test',
          'x-ctxgate-session': `split-${index}`,
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 16,
          tools: anthropicRequest.tools,
          messages: [{ role: 'user', content: `Task number ${index}: list the files.` }],
        }),
      })
      await answer.body.dump()
    }
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const answer = await request(`${stack.proxyUrl}/ctxgate/sessions?limit=1000`)
    const body = (await answer.body.json()) as {
      sessions: { arm?: string }[]
      holdout: { control: { sessions: number }; treated: { sessions: number }; verdict: string }[]
    }
    const control = body.sessions.filter((session) => session.arm === 'control').length
    expect(body.sessions).toHaveLength(sessions)
    // Binomial(120, ½): sd ≈ 5.5; four of them either side.
    expect(Math.abs(control - sessions / 2)).toBeLessThanOrEqual(22)
    expect(body.holdout).toHaveLength(1)
    expect(body.holdout[0]?.control.sessions).toBe(control)
    expect(body.holdout[0]?.treated.sessions).toBe(sessions - control)
    expect(body.holdout[0]?.verdict).toMatch(/less billed input per session|not enough sessions yet/)
    // The live page reads the same comparison.
    const page = await request(`${stack.proxyUrl}/ctxgate/holdout`)
    const shown = (await page.body.json()) as { holdout: unknown[] }
    expect(shown.holdout).toEqual(body.holdout)
    // And the metrics, per kind and arm.
    const metrics = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
    expect(metrics).toMatch(new RegExp(`ctxgate_holdout_sessions\\{kind="[^"]+",arm="control"\\} ${control}\\n`))
    expect(metrics).toMatch(
      new RegExp(`ctxgate_holdout_sessions\\{kind="[^"]+",arm="treated"\\} ${sessions - control}\\n`),
    )
  })
})
