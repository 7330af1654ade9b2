import { mkdtempSync, writeFileSync } from 'node:fs'
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
  })
})
