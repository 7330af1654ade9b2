import OpenAI from 'openai'
import { ResponsesWS } from 'openai/resources/responses/ws'
import { afterEach, describe, expect, it } from 'vitest'
import { systemNote } from '../../src/rewrite/notes.ts'
import { output, type Json } from '../helpers/conversations.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

/**
 * The system note must not cost the prompt cache: on OpenAI wire formats it joins right after the
 * first edited result, so the first edited request still reads what came before it from the cache
 * (with the note at the head it would read nothing). Real sockets, the official SDK, the mock's
 * OpenAI prefix cache, which also refuses a request whose tool calls and results do not pair.
 */
const longSystemPrompt = output('prose', 12_000, 1)
const longTask = `Fix the build. ${output('prose', 12_000, 2)}`
const window = 24_000

let stack: Stack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

async function stackWith(placement: 'auto' | 'head', agentSteps?: number): Promise<{ stack: Stack; client: OpenAI }> {
  stack = await startStack({
    config: {
      models: [{ match: '*', window, budget: 1, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      rewrite: { systemNotePlacement: placement },
    },
    ...(agentSteps === undefined ? {} : { mock: { agentSteps } }),
  })
  return { stack, client: new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-note-test-0001', maxRetries: 0 }) }
}

/** The body the mock received for its `index`-th request. */
const received = (server: Stack, index: number): Json => JSON.parse(server.mock.requests[index]?.body ?? '{}') as Json

/** Sends the agent's Chat requests, one more tool round each, until ctxgate first edits; returns that request's usage. */
async function chatUntilFirstEdit(client: OpenAI): Promise<{ usage: OpenAI.CompletionUsage; index: number }> {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: longSystemPrompt },
    { role: 'user', content: longTask },
  ]
  for (let round = 0; round < 12; round++) {
    const id = `call_${round}`
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name: 'sh', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: id, content: output('log', 24_000, round) },
    )
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-5', prompt_cache_key: 'note-chat', messages }, { headers: { 'x-ctxgate-debug': 'on' } })
      .withResponse()
    if (response.headers.get('x-ctxgate-edit') === 'batch') return { usage: data.usage!, index: round }
  }
  throw new Error('ctxgate never edited the conversation')
}

describe('the system note on Chat Completions, through the openai SDK', () => {
  it('joins after the first cleared result, so the first edited request still reads the task from the cache', async () => {
    const { stack: server, client } = await stackWith('auto')
    const { usage, index } = await chatUntilFirstEdit(client)
    const sent = received(server, index)['messages'] as Json[]
    const firstCleared = sent.findIndex((message) => String(message['content']).startsWith('[ctxgate'))
    expect(sent.slice(0, 2)).toEqual([
      { role: 'system', content: longSystemPrompt },
      { role: 'user', content: longTask },
    ])
    expect(sent[firstCleared - 1]?.['role']).toBe('assistant')
    expect(sent[firstCleared + 1]).toEqual({ role: 'system', content: systemNote })
    expect(sent.filter((message) => message['content'] === systemNote)).toHaveLength(1)
    const autoCached = usage.prompt_tokens_details?.cached_tokens ?? 0
    await server.close()

    // Placed after the system head instead, the same request reads only the system prompt from the cache.
    const head = await stackWith('head')
    const atHead = await chatUntilFirstEdit(head.client)
    expect(atHead.index).toBe(index)
    expect((received(head.stack, index)['messages'] as Json[])[1]).toEqual({ role: 'system', content: systemNote })
    const headCached = atHead.usage.prompt_tokens_details?.cached_tokens ?? 0
    expect(headCached).toBeGreaterThan(0)
    expect(autoCached - headCached).toBeGreaterThanOrEqual(1_024)
  })
})

describe('the system note on the Responses API, through the openai SDK', () => {
  const shell: OpenAI.Responses.FunctionTool = {
    type: 'function',
    name: 'exec_command',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  }

  /** Sends the agent's Responses requests over HTTP until ctxgate first edits; returns that response and its request's index. */
  async function responsesUntilFirstEdit(client: OpenAI): Promise<{ data: OpenAI.Responses.Response; index: number }> {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: longTask }]
    for (let step = 0; step < 12; step++) {
      const { data, response } = await client.responses
        .create(
          { model: 'gpt-5', instructions: longSystemPrompt, input, tools: [shell], store: false },
          { headers: { 'x-ctxgate-debug': 'on' } },
        )
        .withResponse()
      if (response.headers.get('x-ctxgate-edit') === 'batch') return { data, index: step }
      const call = data.output.find((item) => item.type === 'function_call')
      if (!call) break
      input.push(call, { type: 'function_call_output', call_id: call.call_id, output: output('log', 24_000, step) })
    }
    throw new Error('ctxgate never edited the conversation')
  }

  it('over HTTP leaves instructions alone and puts a developer message after the first cleared output', async () => {
    const { stack: server, client } = await stackWith('auto', 12)
    const { data, index } = await responsesUntilFirstEdit(client)
    const sent = received(server, index)
    expect(sent['instructions']).toBe(longSystemPrompt)
    const items = sent['input'] as Json[]
    const firstCleared = items.findIndex((item) => String(item['output']).startsWith('[ctxgate'))
    expect(items[firstCleared + 1]).toEqual({
      type: 'message',
      role: 'developer',
      content: [{ type: 'input_text', text: systemNote }],
    })
    expect(data.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1_024)
  })

  it('over HTTP with the note appended to instructions instead, the first edited request reads nothing from the cache', async () => {
    const { stack: server, client } = await stackWith('head', 12)
    const { data, index } = await responsesUntilFirstEdit(client)
    expect(received(server, index)['instructions']).toBe(`${longSystemPrompt}\n\n${systemNote}`)
    expect(data.usage?.input_tokens_details.cached_tokens).toBe(0)
  })

  it('over the WebSocket sends unedited turns as the client did, previous_response_id and all, and the first edited one keeps its cache', async () => {
    const { stack: server, client } = await stackWith('auto', 12)
    const socket = new ResponsesWS(client)
    const completed: OpenAI.Responses.Response[] = []
    const waiters: ((response: OpenAI.Responses.Response) => void)[] = []
    socket.on('response.completed', (event) => {
      completed.push(event.response)
      waiters.shift()?.(event.response)
    })
    const next = () => new Promise<OpenAI.Responses.Response>((resolve) => waiters.push(resolve))
    try {
      let waiting = next()
      socket.send({
        type: 'response.create',
        model: 'gpt-5',
        store: false,
        prompt_cache_key: 'note-ws',
        tools: [shell],
        input: [
          { role: 'developer', content: longSystemPrompt },
          { role: 'user', content: 'Look around' },
        ],
      })
      for (let step = 0; step < 12; step++) {
        const response = await waiting
        const sent = received(server, step)
        if ((sent['input'] as Json[]).some((item) => String(item['output']).startsWith('[ctxgate'))) {
          expect(sent['previous_response_id']).toBeUndefined()
          const items = sent['input'] as Json[]
          const firstCleared = items.findIndex((item) => String(item['output']).startsWith('[ctxgate'))
          expect(items[firstCleared + 1]?.['role']).toBe('developer')
          expect(items[0]).toEqual({ role: 'developer', content: longSystemPrompt })
          expect(response.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1_024)
          // Before it, every turn went as the client sent it.
          expect(received(server, 1)['previous_response_id']).toBe(completed[0]?.id)
          return
        }
        const call = response.output.find((item) => item.type === 'function_call')
        if (!call) break
        waiting = next()
        socket.send({
          type: 'response.create',
          model: 'gpt-5',
          store: false,
          prompt_cache_key: 'note-ws',
          tools: [shell],
          previous_response_id: response.id,
          input: [{ type: 'function_call_output', call_id: call.call_id, output: output('log', 24_000, step) }],
        })
      }
      throw new Error('ctxgate never edited the conversation')
    } finally {
      socket.close()
    }
  })
})
