import { copyFileSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Conversation } from '../../src/replay/conversation.ts'
import { buildAnthropicRequests } from '../../src/replay/build-requests.ts'
import { latestRecording, recordingById } from '../../src/replay/importers/default-locations.ts'
import { ImportError } from '../../src/replay/importers/import-error.ts'
import { loadRecording, loadRecordingFile } from '../../src/replay/importers/load-recording.ts'

const fixture = (name: string) => new URL(`../fixtures/replay/clients/${name}`, import.meta.url).pathname
const requestCount = (conversation: Conversation) =>
  buildAnthropicRequests(conversation, { maxTokens: 1024, clientCache: 'none', stream: false }).length
const load = async (name: string, uncompacted = false) => {
  const { format, conversations } = await loadRecordingFile(fixture(name), { uncompacted })
  expect(conversations).toHaveLength(1)
  return { format, conversation: conversations[0] as Conversation }
}
const toolUses = (conversation: Conversation) =>
  conversation.segments.flat().flatMap((message) => message.content.filter((block) => block.type === 'tool_use'))

// Each fixture was recorded by running the agent against `ctxgate mock`; its own records say how
// many model requests it made, and the replay must make the same number.
describe('Codex rollout', () => {
  it('follows both compactions from their replacement history: 9 requests, as the rollout recorded', async () => {
    const { format, conversation } = await load('codex-rollout.jsonl')
    expect(format).toBe('codex-rollout')
    expect(conversation.segments).toHaveLength(3)
    expect(requestCount(conversation)).toBe(9)
    expect(conversation.recordedUsage?.requests).toBe(9)
    expect(conversation.model).toBe('gpt-5-codex')
    expect(conversation.system).toContain('You are a coding agent running in the Codex CLI')
    expect(toolUses(conversation)[0]).toMatchObject({ name: 'exec_command', input: { cmd: 'seq 1 3000' } })
    expect(JSON.stringify(conversation.segments[1]?.[0])).toContain('<skills_instructions>')
    expect(conversation.notes.join('\n')).toMatch(
      /2 compaction\(s\) followed as recorded[\s\S]*recorded by the agent itself: 9 requests, input 61,604, cache write 0, cache read 82,944, output 228/,
    )
  })

  it('undoes the compactions on request: one history, the summary replies dropped', async () => {
    const { conversation } = await load('codex-rollout.jsonl', true)
    expect(conversation.segments).toHaveLength(1)
    expect(JSON.stringify(conversation.segments)).not.toContain('This is reply 13')
    // The two compaction requests are gone; the seven working requests remain.
    expect(requestCount(conversation)).toBe(7)
  })

  it('reads the zstd-compressed copy the same way', async () => {
    const plain = await load('codex-rollout.jsonl')
    const packed = await load('codex-rollout.jsonl.zst')
    expect(packed.format).toBe('codex-rollout')
    expect(packed.conversation.segments).toEqual(plain.conversation.segments)
  })
})

describe('Codex exec --json', () => {
  it('turns commands into exec_command calls: 3 calls and the final answer are 4 requests', async () => {
    const { format, conversation } = await load('codex-exec.jsonl')
    expect(format).toBe('codex-exec-json')
    expect(requestCount(conversation)).toBe(4)
    expect(toolUses(conversation).map((block) => (block as { input: { cmd: string } }).input.cmd)).toEqual([
      "/bin/bash -lc 'seq 1 3000'",
      "/bin/bash -lc 'ls -la /usr/lib'",
      "/bin/bash -lc 'seq 1 5000 | tail -n 2500'",
    ])
    expect(conversation.recordedUsage).toEqual({
      inputTokens: 24_857,
      cacheReadTokens: 47_232,
      cacheWriteTokens: 0,
      outputTokens: 111,
    })
    expect(conversation.notes.join('\n')).toContain('the prompt is not in an exec --json log')
  })
})

describe('Codex exec --json plans', () => {
  it('counts each start and update of the plan as an update_plan call, and not its completion', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxgate-exec-plan-'))
    const plan = (type: string, done: boolean) => ({
      type,
      item: { id: 'item_1', type: 'todo_list', items: [{ text: 'write tests', completed: done }] },
    })
    const lines = [
      { type: 'thread.started', thread_id: 't1' },
      { type: 'turn.started' },
      plan('item.started', false),
      {
        type: 'item.completed',
        item: { id: 'item_2', type: 'command_execution', command: 'ls', aggregated_output: 'a', exit_code: 0 },
      },
      plan('item.updated', true),
      { type: 'item.completed', item: { id: 'item_3', type: 'agent_message', text: 'done' } },
      plan('item.completed', true),
      { type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 2 } },
    ]
    writeFileSync(join(dir, 'run.jsonl'), lines.map((line) => JSON.stringify(line)).join('\n'))
    const { conversations } = loadRecording(join(dir, 'run.jsonl'), { uncompacted: false })
    const conversation = conversations[0] as Conversation
    // Two plan calls and one command, then the answer: four requests.
    expect(requestCount(conversation)).toBe(4)
    expect(toolUses(conversation).map((block) => (block as { name: string }).name)).toEqual([
      'update_plan',
      'exec_command',
      'update_plan',
    ])
  })
})

describe('opencode', () => {
  it('reads the export: one request per step, tool parts as call and result', async () => {
    const { format, conversation } = await load('opencode-export.json')
    expect(format).toBe('opencode-export')
    expect(requestCount(conversation)).toBe(4)
    expect(conversation.recordedUsage?.requests).toBe(4)
    expect(toolUses(conversation)[0]).toMatchObject({ name: 'bash', input: { command: 'seq 1 4000' } })
    expect(conversation.notes.join('\n')).toContain(
      'recorded by the agent itself: 4 requests, input 32, cache write 28,441, cache read 48,342, output 133, $0.12',
    )
  })

  it('reads the same session from opencode.db', async () => {
    const fromExport = await load('opencode-export.json')
    const fromDatabase = await load('opencode.db')
    expect(fromDatabase.format).toBe('opencode-db')
    expect(fromDatabase.conversation.id).toBe(fromExport.conversation.id)
    expect(fromDatabase.conversation.segments).toEqual(fromExport.conversation.segments)
    expect(fromDatabase.conversation.recordedUsage).toEqual(fromExport.conversation.recordedUsage)
  })

  it('names a missing session, and the synchronous loader sends a database to the async one', async () => {
    await expect(
      loadRecordingFile(fixture('opencode.db'), { uncompacted: false, session: { id: 'ses_nope' } }),
    ).rejects.toThrow(/no opencode session ses_nope/)
    expect(() => loadRecording(fixture('opencode.db'), { uncompacted: false })).toThrow(ImportError)
  })
})

describe('Gemini CLI session', () => {
  it('applies updates by id and the rewind: 5 requests, the undone turn left out', async () => {
    const { format, conversation } = await load('gemini-session.jsonl')
    expect(format).toBe('gemini-session')
    expect(requestCount(conversation)).toBe(5)
    expect(JSON.stringify(conversation.segments)).not.toContain('rm main.py')
    expect(JSON.stringify(conversation.segments)).toContain('README.md has 7 lines.')
    const first = conversation.segments[0]?.[2]?.content[0]
    expect(first).toMatchObject({ type: 'tool_result', tool_use_id: 'run_shell_command-1' })
    expect(conversation.recordedUsage).toMatchObject({ requests: 5, cacheReadTokens: 37_120 })
    expect(conversation.notes.join('\n')).toContain('1 rewind(s) applied')
  })
})

describe('what replay cannot read', () => {
  const write = (name: string, text: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxgate-import-'))
    writeFileSync(join(dir, name), text)
    return join(dir, name)
  }

  it('refuses unknown JSON, and JSON whose messages are not chat messages, rather than replaying zeros', () => {
    expect(() => loadRecording(write('a.json', '{\n  "foo": 1\n}\n'), { uncompacted: false })).toThrow(
      /unrecognised format/,
    )
    expect(() =>
      loadRecording(write('b.json', JSON.stringify({ messages: [{ info: {}, parts: 3 }] })), { uncompacted: false }),
    ).toThrow(/unrecognised format/)
  })

  it('refuses a recording with no request in it', () => {
    const empty = JSON.stringify({ info: { id: 'ses_1' }, messages: [] })
    expect(() => loadRecording(write('c.json', empty), { uncompacted: false })).toThrow(/holds no model request/)
  })
})

describe("the agents' default folders", () => {
  it('finds the newest rollout under CODEX_HOME and a session by id', () => {
    const home = mkdtempSync(join(tmpdir(), 'ctxgate-codex-home-'))
    const day = join(home, 'sessions', '2026', '12', '01')
    mkdirSync(day, { recursive: true })
    const older = join(day, 'rollout-2026-12-01T08-00-00-aaaa.jsonl')
    const newer = join(day, 'rollout-2026-12-01T09-00-00-bbbb.jsonl.zst')
    copyFileSync(fixture('codex-rollout.jsonl'), older)
    copyFileSync(fixture('codex-rollout.jsonl.zst'), newer)
    utimesSync(older, 1_000, 1_000)
    expect(latestRecording('codex', { CODEX_HOME: home }).path).toBe(newer)
    expect(recordingById('aaaa', 'codex', { CODEX_HOME: home }).path).toBe(older)
    expect(() => recordingById('cccc', 'codex', { CODEX_HOME: home })).toThrow(/no session with this id/)
  })

  it('points opencode at its database under XDG_DATA_HOME and Gemini CLI at ~/.gemini/tmp/*/chats', () => {
    const data = mkdtempSync(join(tmpdir(), 'ctxgate-xdg-'))
    mkdirSync(join(data, 'opencode'))
    copyFileSync(fixture('opencode.db'), join(data, 'opencode', 'opencode.db'))
    expect(latestRecording('opencode', { XDG_DATA_HOME: data })).toEqual({
      path: join(data, 'opencode', 'opencode.db'),
      session: 'latest',
    })
    const home = mkdtempSync(join(tmpdir(), 'ctxgate-gemini-'))
    const chats = join(home, '.gemini', 'tmp', 'project', 'chats')
    mkdirSync(chats, { recursive: true })
    copyFileSync(fixture('gemini-session.jsonl'), join(chats, 'session-2026-12-01T09-00-8f2c1a7e.jsonl'))
    expect(recordingById('8f2c1a7e-5b3d-4c9a-9e61-2d7f0b4a6c15', 'gemini-cli', { HOME: home }).path).toContain(
      'session-2026-12-01T09-00-8f2c1a7e.jsonl',
    )
  })
})
