import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { EventSourceMessage } from 'eventsource-parser'
import { wireFormats } from '../../src/providers/registry.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import { createSseTap } from '../../src/stream/sse-tap.ts'

const fixtures = join(import.meta.dirname, '../fixtures/sse')
const read = (name: string): Buffer => readFileSync(join(fixtures, name))
const format = (name: WireFormat) => wireFormats.find((candidate) => candidate.name === name)

/** The file's events as ctxgate's tap sees them, the bytes arriving in small chunks that split frames anywhere. */
function eventsOf(name: string, chunkBytes = 7): EventSourceMessage[] {
  const bytes = read(name)
  const events: EventSourceMessage[] = []
  const tap = createSseTap((event) => events.push(event))
  for (let at = 0; at < bytes.length; at += chunkBytes) tap.push(bytes.subarray(at, at + chunkBytes))
  tap.end()
  expect(tap.failed).toBe(false)
  expect(tap.atEventBoundary).toBe(true)
  return events
}

/** The format's usage reader fed the whole stream: what ctxgate records for the answer. */
function streamed(name: WireFormat, file: string) {
  const reader = format(name)?.chat?.usage()
  if (!reader) throw new Error(`${name} has no usage reader`)
  for (const event of eventsOf(file)) reader.onEvent(event)
  return { usage: reader.result(), complete: reader.complete(), response: reader.response?.() }
}

describe('usage read from the SSE fixtures', () => {
  it('Messages: counts from message_start, output from the last message_delta, the 5m/1h split of writes', () => {
    const { usage, complete, response } = streamed('anthropic-messages', 'anthropic-messages-tool-use.sse')
    expect(usage).toEqual({
      inputTokens: 1_204,
      cacheWrite5mTokens: 2_900,
      cacheWrite1hTokens: 200,
      cacheReadTokens: 48_210,
      outputTokens: 87,
    })
    expect(complete).toBe(true)
    expect(response).toMatchObject({ id: 'msg_fixture_1', model: 'claude-sonnet-4-5-20250929' })
  })

  it('Messages: a server compaction pass and context edits reported on the final message_delta', () => {
    const { usage } = streamed('anthropic-messages', 'anthropic-messages-server-edits.sse')
    expect(usage).toEqual({
      inputTokens: 23_000,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      cacheReadTokens: 0,
      outputTokens: 1_000,
      compaction: {
        inputTokens: 180_000,
        cacheWrite5mTokens: 400,
        cacheWrite1hTokens: 100,
        cacheReadTokens: 2_000,
        outputTokens: 3_500,
      },
      serverEdits: { clearedToolUses: 8, clearedThinkingTurns: 3, clearedInputTokens: 62_000 },
    })
  })

  it('Chat Completions: the include_usage chunk after the finish, cached tokens taken out of prompt_tokens', () => {
    const { usage, complete } = streamed('openai-chat', 'openai-chat-include-usage.sse')
    expect(usage).toEqual({
      inputTokens: 9_120 - 8_064,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      cacheReadTokens: 8_064,
      outputTokens: 41,
    })
    expect(complete).toBe(true)
  })

  it('Responses: usage on response.completed, with no [DONE] after it', () => {
    const { usage, complete, response } = streamed('openai-responses', 'openai-responses-completed.sse')
    expect(usage).toEqual({
      inputTokens: 30_512 - 28_160,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      cacheReadTokens: 28_160,
      outputTokens: 734,
    })
    expect(complete).toBe(true)
    expect(response).toMatchObject({ id: 'resp_fixture_1', model: 'gpt-5.1-codex' })
  })
})

describe('length refusals read from the fixtures', () => {
  it("reads the Messages API's 400 body with its measured size and limit", () => {
    expect(format('anthropic-messages')?.lengthRefusal?.(read('anthropic-too-long.json'))).toEqual({
      actualTokens: 213_407,
      limit: 200_000,
    })
  })

  it('reads the Chat Completions 400 body with its window and measured size', () => {
    expect(format('openai-chat')?.lengthRefusal?.(read('openai-chat-too-long.json'))).toEqual({
      actualTokens: 131_072,
      limit: 128_000,
    })
  })

  it('finds a Responses refusal inside the 200 stream, after a preamble that says nothing', () => {
    const reader = format('openai-responses')?.streamRefusal
    if (!reader) throw new Error('openai-responses reads no in-stream refusal')
    const events = eventsOf('openai-responses-too-long.sse')
    expect(events.map((event) => event.event)).toEqual(['response.created', 'response.in_progress', 'response.failed'])
    expect(events.slice(0, 2).every((event) => reader.preamble.has(event.event ?? ''))).toBe(true)
    expect(events.slice(0, 2).map((event) => reader.read(event.data))).toEqual([undefined, undefined])
    expect(reader.read(events[2]?.data ?? '')).toEqual({})
  })

  it('reads no refusal in answers that are not one', () => {
    const reader = format('openai-responses')?.streamRefusal
    for (const event of eventsOf('openai-responses-completed.sse')) expect(reader?.read(event.data)).toBeUndefined()
    expect(format('anthropic-messages')?.lengthRefusal?.(read('openai-chat-too-long.json'))).toBeUndefined()
  })
})
