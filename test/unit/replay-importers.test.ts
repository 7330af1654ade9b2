import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { toJsonl, type Conversation } from '../../src/replay/conversation.ts'
import { loadRecording } from '../../src/replay/importers/load-recording.ts'

const fixture = (name: string) => new URL(`../fixtures/replay/${name}`, import.meta.url).pathname
const roles = (conversation: Conversation, segment = 0) =>
  conversation.segments[segment]?.map((message) => message.role)
const only = (path: string, uncompacted = false) => {
  const { format, conversations } = loadRecording(path, { uncompacted })
  expect(conversations).toHaveLength(1)
  return { format, conversation: conversations[0] as Conversation }
}

describe('Claude Code stream-json', () => {
  it('merges one reply’s lines, skips sub-agents, keeps the retried reply and follows compaction as recorded', () => {
    const { format, conversation } = only(fixture('claude-stream.agent_log_raw.jsonl'))
    expect(format).toBe('claude-stream-json')
    expect(conversation.model).toBe('claude-sonnet-4-5-test')
    expect(conversation.segments).toHaveLength(2)
    const [before, after] = conversation.segments
    expect(before?.[0]?.content).toEqual([{ type: 'text', text: 'Implement the plan in plan.md.' }])
    expect(before?.[1]?.content.map((block) => block.type)).toEqual(['text', 'tool_use'])
    expect(JSON.stringify(conversation.segments)).not.toContain('sub-agent noise')
    expect(JSON.stringify(conversation.segments)).not.toContain('abandoned reply')
    expect(before?.[3]?.content).toEqual([
      { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'npm test' } },
    ])
    expect(after?.[0]?.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Summary') })
    expect(roles(conversation, 1)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(conversation.tools.map((tool) => tool.name)).toEqual(['Read', 'Bash'])
    expect(conversation.recordedUsage).toEqual({
      inputTokens: 10,
      cacheWriteTokens: 2000,
      cacheReadTokens: 9000,
      outputTokens: 300,
      costUsd: 0.42,
    })
    expect(conversation.notes.join(' ')).toMatch(
      /1 compaction\(s\) followed as recorded.*1 retried response.*recorded by the agent itself: input 10, cache write 2000, cache read 9000, output 300, \$0.42/,
    )
  })

  it('undoes the compaction on request: one history, no summary', () => {
    const { conversation } = only(fixture('claude-stream.agent_log_raw.jsonl'), true)
    expect(conversation.segments).toHaveLength(1)
    expect(JSON.stringify(conversation.segments)).not.toContain('Summary:')
    expect(roles(conversation)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ])
  })
})

describe('Claude Code session files', () => {
  it('follows parentUuid from the newest main-chain line, skips sidechains, splits at the compaction', () => {
    const { format, conversation } = only(fixture('claude-session.jsonl'))
    expect(format).toBe('claude-session')
    expect(conversation.model).toBe('claude-opus-4-8')
    expect(conversation.segments.map((segment) => segment.length)).toEqual([5, 4])
    expect(conversation.segments[0]?.[1]?.content.map((block) => block.type)).toEqual(['text', 'tool_use'])
    expect(JSON.stringify(conversation.segments)).not.toContain('sidechain')
    expect(conversation.tools.map((tool) => tool.name).toSorted()).toEqual(['Edit', 'Grep', 'Read'])
  })

  it('joins across the boundary through logicalParentUuid when uncompacted', () => {
    const { conversation } = only(fixture('claude-session.jsonl'), true)
    expect(conversation.segments).toHaveLength(1)
    expect(roles(conversation)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ])
    expect(JSON.stringify(conversation.segments)).not.toContain('Summary:')
  })
})

describe('OpenAI-shaped recordings', () => {
  it('reads every run of an OpenHands output file, grouping actions by model response', () => {
    const { format, conversations } = loadRecording(fixture('openhands.jsonl'), { uncompacted: false })
    expect(format).toBe('openhands')
    expect(conversations.map((conversation) => conversation.id)).toEqual(['repo-12', 'repo-13'])
    const first = conversations[0] as Conversation
    expect(first.system).toBe('You are OpenHands agent.')
    expect(first.tools).toEqual([
      {
        name: 'execute_bash',
        description: 'Run bash',
        input_schema: { type: 'object', properties: { command: { type: 'string' } } },
      },
    ])
    expect(roles(first)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(first.segments[0]?.[1]?.content.map((block) => block.type)).toEqual(['text', 'tool_use', 'tool_use'])
    expect(first.segments[0]?.[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'call_a', content: 'README.md' },
      { type: 'tool_result', tool_use_id: 'call_b', content: '/workspace' },
    ])
  })

  it('reads mini-swe-agent v2 as tool calls and v1 as text turns', () => {
    const v2 = only(fixture('mini-v2.traj.json'))
    expect(v2.format).toBe('mini-swe-agent')
    expect(v2.conversation.model).toBe('deepseek-test')
    expect(v2.conversation.tools.map((tool) => tool.name)).toEqual(['bash'])
    expect(v2.conversation.segments[0]?.[1]?.content[1]).toEqual({
      type: 'tool_use',
      id: 'call_1',
      name: 'bash',
      input: { command: 'ls' },
    })
    expect(JSON.stringify(v2.conversation)).not.toContain('extra')
    const v1 = only(fixture('mini-v1.traj.json'))
    expect(v1.conversation.tools).toEqual([])
    expect(v1.conversation.system).toBe('Answer with one bash block.')
    expect(roles(v1.conversation)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })

  it('reads a plain OpenAI message list, keeping arguments that are not JSON and merging a tool result with the next user text', () => {
    const { format, conversation } = only(fixture('openai-messages.json'))
    expect(format).toBe('openai-messages')
    expect(conversation.segments[0]?.[1]?.content[0]).toEqual({
      type: 'tool_use',
      id: 'c1',
      name: 'shell',
      input: { arguments: 'not json' },
    })
    expect(conversation.segments[0]?.[2]?.content.map((block) => block.type)).toEqual(['tool_result', 'text'])
    expect(conversation.notes.join(' ')).toMatch(/not JSON/)
  })
})

describe('ctxgate JSONL', () => {
  it('round-trips every importer’s output, segments included', () => {
    const directory = mkdtempSync(join(tmpdir(), 'ctxgate-replay-'))
    for (const name of [
      'claude-stream.agent_log_raw.jsonl',
      'claude-session.jsonl',
      'openhands.jsonl',
      'mini-v2.traj.json',
    ]) {
      for (const original of loadRecording(fixture(name), { uncompacted: false }).conversations) {
        const path = join(directory, `${original.id}.jsonl`)
        writeFileSync(path, toJsonl(original))
        const { format, conversations } = loadRecording(path, { uncompacted: false })
        expect(format).toBe('ctxgate')
        expect(conversations).toEqual([original])
      }
    }
  })

  it('names the problem when a file is not a recording', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ctxgate-replay-')), 'x.jsonl')
    writeFileSync(path, '{"hello":"world"}\n')
    expect(() => loadRecording(path, { uncompacted: false })).toThrow(/unrecognised format/)
    writeFileSync(path, '{"a":1}\nnot json\n')
    expect(() => loadRecording(path, { uncompacted: false })).toThrow(/line 2 is not JSON/)
    writeFileSync(path, '{"a":1}\n\nnot json\n{"b":2}\n')
    expect(() => loadRecording(path, { uncompacted: false })).toThrow(/line 3 is not JSON/)
  })

  it('skips a last line cut short (a recording still being written), with a note', () => {
    const whole = readFileSync(fixture('claude-session.jsonl'), 'utf8')
    const path = join(mkdtempSync(join(tmpdir(), 'ctxgate-replay-')), 'cut.jsonl')
    writeFileSync(path, `${whole.trimEnd()}\n{"uuid": "u99", "parentUuid": "a3", "sessionId": "s-2", "type": "us`)
    const cut = only(path).conversation
    const intact = only(fixture('claude-session.jsonl')).conversation
    expect(cut.segments).toEqual(intact.segments)
    expect(cut.notes.at(-1)).toBe(
      `line ${whole.trimEnd().split('\n').length + 1} was cut short (the recording was still being written?) and was skipped`,
    )
  })
})

describe('Claude Code synthetic API errors', () => {
  const line = (fields: Record<string, unknown>) =>
    JSON.stringify({ sessionId: 's-9', isSidechain: false, timestamp: '2026-11-01T00:00:00Z', ...fields })
  const apiError = {
    id: 'syn1',
    role: 'assistant',
    model: '<synthetic>',
    content: [{ type: 'text', text: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}' }],
  }

  it('skips the assistant message Claude Code writes for a failed call, in session files', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ctxgate-replay-')), 'session.jsonl')
    const lines = [
      line({ uuid: 'u1', parentUuid: null, type: 'user', message: { role: 'user', content: 'Fix it.' } }),
      line({ uuid: 'e1', parentUuid: 'u1', type: 'assistant', isApiErrorMessage: true, message: apiError }),
      line({ uuid: 'u2', parentUuid: 'e1', type: 'user', message: { role: 'user', content: 'Try again.' } }),
      line({
        uuid: 'a1',
        parentUuid: 'u2',
        type: 'assistant',
        message: { id: 'm1', role: 'assistant', model: 'claude-opus-4-8', content: [{ type: 'text', text: 'Done.' }] },
      }),
    ]
    writeFileSync(path, `${lines.join('\n')}\n`)
    const { conversation } = only(path)
    expect(JSON.stringify(conversation.segments)).not.toContain('API Error')
    expect(roles(conversation)).toEqual(['user', 'assistant'])
    expect(conversation.model).toBe('claude-opus-4-8')
    expect(conversation.notes.join(' ')).toMatch(/1 synthetic "API Error" message\(s\)/)
  })

  it('skips it in stream-json logs too', () => {
    const directory = mkdtempSync(join(tmpdir(), 'ctxgate-replay-'))
    const path = join(directory, 'run.agent_log_raw.jsonl')
    writeFileSync(join(directory, 'run.prompt.txt'), 'Fix it.')
    const lines = [
      { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Bash'], session_id: 'x' },
      { type: 'assistant', message: apiError, session_id: 'x' },
      {
        type: 'assistant',
        message: {
          id: 'm1',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: 'Done.' }],
        },
        session_id: 'x',
      },
    ]
    writeFileSync(path, `${lines.map((entry) => JSON.stringify(entry)).join('\n')}\n`)
    const { conversation } = only(path)
    expect(JSON.stringify(conversation.segments)).not.toContain('API Error')
    expect(conversation.model).toBe('claude-sonnet-4-5')
    expect(conversation.notes.join(' ')).toMatch(/1 synthetic "API Error" message\(s\)/)
  })
})
