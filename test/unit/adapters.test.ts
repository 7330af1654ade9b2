import { describe, expect, it } from 'vitest'
import { NotAChatRequest } from '../../src/providers/adapter-contract.ts'
import { openaiResponsesAdapter } from '../../src/providers/openai/responses-adapter.ts'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { systemNote } from '../../src/rewrite/notes.ts'
import { fieldsAddedOnly } from '../../src/util/add-json-fields.ts'
import { output, type Json } from '../helpers/conversations.ts'
import { markedBlocks, twoMarkedSystemBlocks } from '../helpers/cache-marks.ts'
import { createRewriter, reportOf, sentBody } from '../helpers/rewrite.ts'

const big = (seed: number) => output('json', 8_000, seed)

function chatMessages(rounds: number): Json[] {
  const messages: Json[] = [
    { role: 'system', content: 'You are helpful.' },
    { role: 'user', content: 'Fix it.' },
  ]
  for (let round = 0; round < rounds; round++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: `call_${round}`, type: 'function', function: { name: 'bash', arguments: `{"command":"cat f${round}"}` } },
      ],
    })
    messages.push({ role: 'tool', tool_call_id: `call_${round}`, content: big(round), x_unknown: round })
  }
  return messages
}

describe('OpenAI Chat Completions adapter', () => {
  it('folds and clears tool messages in place, keeps the system head, adds the note and a prompt_cache_key', async () => {
    const rewrite = createRewriter('openai-chat', 20_000)
    const body = { model: 'gpt-5', messages: chatMessages(10), x_top: 1 }
    const result = await rewrite(body)
    const sent = sentBody(result)
    const messages = sent['messages'] as Json[]
    expect(messages[0]).toEqual({ role: 'system', content: 'You are helpful.' })
    expect(messages[1]).toEqual({ role: 'user', content: 'Fix it.' })
    // The note joins right after the first edited result, so everything before it stays as the client sent it.
    const firstEdited = messages.findIndex((message) => String(message['content']).startsWith('[ctxgate'))
    expect(messages.slice(0, firstEdited)).toEqual(body.messages.slice(0, firstEdited))
    expect(messages[firstEdited + 1]).toEqual({ role: 'system', content: systemNote })
    expect(messages.filter((message) => message['content'] === systemNote)).toHaveLength(1)
    const tools = messages.filter((message) => message['role'] === 'tool')
    expect(tools).toHaveLength(10)
    expect(
      tools.every((message, index) => message['tool_call_id'] === `call_${index}` && message['x_unknown'] === index),
    ).toBe(true)
    expect(String(tools[0]?.['content'])).toMatch(/^\[ctxgate/)
    expect(tools.at(-1)?.['content']).toBe(big(9))
    expect(sent['x_top']).toBe(1)
    expect(sent['prompt_cache_key']).toMatch(/^h-/)
    expect(reportOf(result)['newBatch']).toBe(true)
  })

  it('with systemNotePlacement head, puts the note after the system head instead', async () => {
    const rewrite = createRewriter('openai-chat', 20_000, { rewrite: { systemNotePlacement: 'head' } })
    const messages = sentBody(await rewrite({ model: 'gpt-5', messages: chatMessages(10) }))['messages'] as Json[]
    expect(messages.slice(0, 3)).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'system', content: systemNote },
      { role: 'user', content: 'Fix it.' },
    ])
    expect(messages.filter((message) => message['content'] === systemNote)).toHaveLength(1)
  })

  it('keeps the client’s prompt_cache_key and uses it as the session', async () => {
    const rewrite = createRewriter('openai-chat', 200_000)
    const result = await rewrite({ model: 'gpt-5', prompt_cache_key: 'mine', messages: chatMessages(1) })
    expect(sentBody(result)['prompt_cache_key']).toBe('mine')
    expect(result.kind === 'forward' && result.prepared.log?.['session']).toBe('mine')
  })

  it('drops whole rounds when results are too small to clear, keeping the first user message', async () => {
    const rewrite = createRewriter('openai-chat', 3_000)
    const messages: Json[] = [{ role: 'user', content: 'Audit everything.' }]
    for (let round = 0; round < 150; round++) {
      messages.push({
        role: 'assistant',
        content: `step ${round}`,
        tool_calls: [{ id: `c${round}`, type: 'function', function: { name: 'ls', arguments: '{}' } }],
      })
      messages.push({ role: 'tool', tool_call_id: `c${round}`, content: `ok ${round}` })
    }
    const sent = sentBody(await rewrite({ model: 'gpt-5', messages }))
    const kept = sent['messages'] as Json[]
    const firstUser = kept.find((message) => message['role'] === 'user')
    expect(String(firstUser?.['content'])).toMatch(/^Audit everything\.\n\n\[ctxgate: \d+ earlier messages/)
    const ids = new Set(
      kept.flatMap((message) => ((message['tool_calls'] as Json[] | undefined) ?? []).map((call) => call['id'])),
    )
    for (const message of kept.filter((entry) => entry['role'] === 'tool'))
      expect(ids.has(message['tool_call_id'])).toBe(true)
  })
})

describe('OpenAI Responses adapter', () => {
  it('gives the drop note an input_text part even when message items leave out their type', async () => {
    const rewrite = createRewriter('openai-responses', 4_000)
    const filler = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ')
    const input: Json[] = [{ role: 'user', content: [{ type: 'input_text', text: 'Task: do it' }] }]
    for (let turn = 0; turn < 12; turn++)
      input.push(
        { role: 'assistant', content: filler(150) },
        { role: 'user', content: [{ type: 'input_text', text: `turn ${turn} ${filler(150)}` }] },
      )
    const result = await rewrite({ model: 'gpt-x', input })
    expect(Number(reportOf(result)['droppedMessages'])).toBeGreaterThan(0)
    const first = (sentBody(result)['input'] as Json[])[0] as { content: Json[] }
    expect(first.content.map((part) => part['type'])).toEqual(['input_text', 'input_text'])
  })

  const reasoningInput = (): Json[] => {
    const input: Json[] = [{ role: 'user', content: [{ type: 'input_text', text: 'Fix it.' }] }]
    for (let round = 0; round < 10; round++) {
      input.push({ type: 'reasoning', id: `rs_${round}`, encrypted_content: `opaque${round}`, summary: [] })
      input.push({ type: 'function_call', call_id: `call_${round}`, name: 'bash', arguments: '{}' })
      input.push({ type: 'function_call_output', call_id: `call_${round}`, output: big(round) })
    }
    return input
  }

  it('replaces function_call_output items, never reasoning items, and puts the note right after the first edited one', async () => {
    const rewrite = createRewriter('openai-responses', 20_000)
    const input = reasoningInput()
    const sent = sentBody(await rewrite({ model: 'gpt-5', instructions: 'Be brief.', input }))
    const items = sent['input'] as Json[]
    expect(items.filter((item) => item['type'] === 'reasoning')).toEqual(
      input.filter((item) => item['type'] === 'reasoning'),
    )
    const outputs = items.filter((item) => item['type'] === 'function_call_output')
    expect(String(outputs[0]?.['output'])).toMatch(/^\[ctxgate/)
    expect(outputs.at(-1)?.['output']).toBe(big(9))
    // Instructions come first in the prompt: left alone, they keep the whole prefix before the edit cached.
    expect(sent['instructions']).toBe('Be brief.')
    expect(items.slice(0, 3)).toEqual(input.slice(0, 3))
    expect(items[4]).toEqual({
      type: 'message',
      role: 'developer',
      content: [{ type: 'input_text', text: systemNote }],
    })
    expect(items[5]).toEqual(input[4])
  })

  it('with systemNotePlacement head, appends the note to instructions instead', async () => {
    const rewrite = createRewriter('openai-responses', 20_000, { rewrite: { systemNotePlacement: 'head' } })
    const input = reasoningInput()
    const sent = sentBody(await rewrite({ model: 'gpt-5', instructions: 'Be brief.', input }))
    expect(sent['instructions']).toBe(`Be brief.\n\n${systemNote}`)
    expect(sent['input'] as Json[]).toHaveLength(input.length)
  })

  it('leaves a string input as the string it is, adding only a prompt_cache_key before it', async () => {
    const rewrite = createRewriter('openai-responses', 200_000)
    const body = { model: 'gpt-5', input: 'hello' }
    const result = await rewrite(body)
    const sent = result.kind === 'forward' ? result.prepared.body.toString() : ''
    expect(sent).toMatch(/^\{"prompt_cache_key":"[^"]+",/)
    expect(sent.endsWith(JSON.stringify(body).slice(1))).toBe(true)
  })
})

describe('Anthropic Messages adapter details', () => {
  const results = (count: number, extra: (index: number) => Json = () => ({})): Json[] => {
    const messages: Json[] = [{ role: 'user', content: 'Go.' }]
    for (let index = 0; index < count; index++) {
      messages.push({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: `t${index}`, signature: `s${index}` },
          { type: 'tool_use', id: `t${index}`, name: 'read', input: {} },
        ],
      })
      messages.push({
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: `t${index}`,
            content: [{ type: 'text', text: big(index) }],
            ...extra(index),
          },
        ],
      })
    }
    return messages
  }

  it('writes the stable head with a one-hour TTL when asked, unless the client chose a TTL itself', () => {
    const estimator = new TokenEstimator()
    const apply = (body: Json) =>
      anthropicMessagesAdapter.apply(body, anthropicMessagesAdapter.view(body, estimator), {
        edits: [],
        sessionId: 's',
        minCacheableTokens: 0,
        thinkingBound: false,
        firstEditedMessage: -1,
        estimator,
        stableTtl: '1h',
      }).body
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      tools: [{ name: 'read', input_schema: { type: 'object' } }],
      system: [{ type: 'text', text: 'You are careful.' }],
      messages: results(2),
    }
    const sent = apply(body)
    expect((sent['tools'] as Json[])[0]?.['cache_control']).toEqual({ type: 'ephemeral', ttl: '1h' })
    expect((sent['system'] as Json[])[0]?.['cache_control']).toEqual({ type: 'ephemeral', ttl: '1h' })
    // The rolling marker on the newest block stays a 5-minute one, after them.
    expect(JSON.stringify((sent['messages'] as Json[]).at(-1))).toContain('"cache_control":{"type":"ephemeral"}')
    // A client that set a TTL anywhere keeps its own choice: ctxgate adds only 5-minute markers.
    const chosen = apply({ ...body, cache_control: { type: 'ephemeral', ttl: '5m' } })
    expect(JSON.stringify(chosen)).not.toContain('"ttl":"1h"')
  })

  it('marks the block just ahead of where the next batch edits, and gives up the old tail only where lookback finds it', () => {
    const estimator = new TokenEstimator()
    const marked = (body: Json, previousTail: number, nextEditResult?: string): string[] => {
      const sent = anthropicMessagesAdapter.apply(body, anthropicMessagesAdapter.view(body, estimator), {
        edits: [],
        sessionId: 's',
        previousTail,
        ...(nextEditResult ? { nextEditResult } : {}),
        minCacheableTokens: 0,
        thinkingBound: false,
        firstEditedMessage: -1,
        estimator,
      }).body
      return markedBlocks(sent)
    }
    // Like Claude Code: the client marks two system blocks and its newest message, leaving one slot.
    const body = (count: number): Json => {
      const messages = results(count)
      const last = messages.at(-1) as Json
      ;((last['content'] as Json[])[0] as Json)['cache_control'] = { type: 'ephemeral' }
      return {
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        system: twoMarkedSystemBlocks,
        messages,
      }
    }
    // The previous tail is 3 blocks before the client's marker: lookback reaches it, so the slot goes ahead of t4
    // (on the tool_use of message 9; thinking blocks cannot carry a marker).
    expect(marked(body(12), 22, 't4')).toEqual(['9.1', '24.0'])
    // With nothing left to edit and the old tail in reach, a marker there would add nothing: the slot stays free.
    expect(marked(body(12), 22)).toEqual(['24.0'])
    // An old tail 20 or more blocks before the newest marker is out of lookback's reach: it keeps the slot.
    expect(marked(body(12), 8, 't4')).toEqual(['8.0', '24.0'])
  })

  it('on a batch request, marks ahead of where the batch starts and ahead of where the batch after it will', () => {
    const estimator = new TokenEstimator()
    const messages = results(12)
    ;(((messages.at(-1) as Json)['content'] as Json[])[0] as Json)['cache_control'] = { type: 'ephemeral' }
    const body: Json = {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: [{ type: 'text', text: 'A', cache_control: { type: 'ephemeral' } }],
      messages,
    }
    const sent = anthropicMessagesAdapter.apply(body, anthropicMessagesAdapter.view(body, estimator), {
      edits: [],
      sessionId: 's',
      nextEditResult: 't1',
      followingEditResult: 't9',
      minCacheableTokens: 0,
      thinkingBound: false,
      firstEditedMessage: -1,
      estimator,
    }).body
    const markedAt = markedBlocks(sent)
    // The client's two, then the tool_use blocks ahead of t1 (message 3) and t9 (message 19): four in all.
    expect(markedAt).toEqual(['3.1', '19.1', '24.0'])
  })

  it('keeps the client’s breakpoints, never exceeds 4 in all, and moves a marker out of replaced content', async () => {
    const rewrite = createRewriter('anthropic-messages', 20_000)
    const messages = results(10)
    const third = messages[2] as Json
    ;((third['content'] as Json[])[0] as Json)['content'] = [
      { type: 'text', text: big(0), cache_control: { type: 'ephemeral' } },
    ]
    const sent = sentBody(
      await rewrite({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages,
      }),
    )
    const text = JSON.stringify(sent)
    expect(text.match(/"cache_control"/g)?.length).toBeLessThanOrEqual(4)
    const sentThird = (sent['messages'] as Json[])[2] as Json
    expect((sentThird['content'] as Json[])[0]?.['cache_control']).toEqual({ type: 'ephemeral' })
    expect((sent['system'] as Json[])[0]?.['cache_control']).toEqual({ type: 'ephemeral', ttl: '1h' })
    // Thinking blocks are passed back exactly as they came.
    for (let index = 0; index < 10; index++)
      expect(text).toContain(`{"type":"thinking","thinking":"t${index}","signature":"s${index}"}`)
  })

  it('on models that bind thinking to its prefix, asks the API to drop invalidated blocks and merges the beta header', async () => {
    const rewrite = createRewriter('anthropic-messages', 20_000, {
      models: [{ match: '*', window: 20_000, budget: 1, minCacheableTokens: 512, thinkingBoundToPrefix: true }],
    })
    const result = await rewrite({
      model: 'claude-fable-5-1',
      max_tokens: 100,
      thinking: { type: 'adaptive' },
      messages: results(10),
    })
    expect(sentBody(result)['thinking']).toEqual({
      type: 'adaptive',
      block_binding: { prefix_mismatch_behavior: 'drop_block' },
    })
    expect(result.kind === 'forward' && result.prepared.headers?.['anthropic-beta']).toBe(
      'thinking-binding-controls-2026-08-01',
    )
  })
})

describe('OpenAI Responses adapter, string input', () => {
  const options = {
    edits: [],
    sessionId: 'session-1',
    minCacheableTokens: 1024,
    thinkingBound: false,
    firstEditedMessage: -1,
    estimator: new TokenEstimator(),
  }

  it('views a string as one user message and writes the very same string back', () => {
    const body = { model: 'gpt-5', input: 'Summarise the log.', instructions: 'Be brief.' }
    const view = openaiResponsesAdapter.view(body, new TokenEstimator())
    expect(view.messages).toHaveLength(1)
    expect(view.messages[0]).toMatchObject({ role: 'user', startsUserTurn: true, toolResults: [] })
    expect(view.messages[0]?.tokens).toBeGreaterThan(4)
    const applied = openaiResponsesAdapter.apply(body, view, { ...options, systemNote: 'note' })
    expect(applied.body['input']).toBe(body.input)
    expect(applied.body['instructions']).toBe('Be brief.\n\nnote')
    expect(applied.body['prompt_cache_key']).toBe('session-1')
    expect(fieldsAddedOnly(body, openaiResponsesAdapter.apply(body, view, options).body)).toEqual({
      prompt_cache_key: 'session-1',
    })
  })

  it('turns the string into a list only when an edit has to write into it', () => {
    const body = { model: 'gpt-5', input: 'Summarise the log.' }
    const view = openaiResponsesAdapter.view(body, new TokenEstimator())
    const drop = { kind: 'drop-messages', from: 1, to: 1, scope: 'turns', note: '[earlier turns removed]' } as const
    const applied = openaiResponsesAdapter.apply(body, view, { ...options, edits: [drop] })
    expect(applied.body['input']).toEqual([
      { type: 'message', role: 'user', content: 'Summarise the log.\n\n[earlier turns removed]' },
    ])
  })

  it('still refuses an input that is neither a string nor a list', () => {
    expect(() => openaiResponsesAdapter.view({ model: 'gpt-5', input: 42 }, new TokenEstimator())).toThrow(
      NotAChatRequest,
    )
  })
})
