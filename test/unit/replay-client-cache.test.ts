import { describe, expect, it } from 'vitest'
import { clientOfRecording } from '../../src/cli/replay.ts'

describe("replay's default client cache: what the recording's agent does", () => {
  it('Claude Code logs and sessions, and exports made from them, mark their own cache', () => {
    expect(clientOfRecording('claude-stream-json', 'run.agent_log_raw.jsonl')).toBe('Claude Code')
    expect(clientOfRecording('claude-session', 'abc.jsonl')).toBe('Claude Code')
    expect(clientOfRecording('ctxgate', 'awa-issue-10_06_testing_revise.agent_log_raw.jsonl')).toBe('Claude Code')
  })
  it('Codex exports too', () => {
    expect(clientOfRecording('ctxgate', 'awa-issue-119_04_review.agent_log_raw.codex-exec.jsonl')).toBe('Codex')
  })
  it('mini-swe-agent, OpenHands and plain message lists mark nothing', () => {
    expect(clientOfRecording('mini-swe-agent', 'x.traj.json')).toBeUndefined()
    expect(clientOfRecording('openhands', 'output.jsonl')).toBeUndefined()
    expect(clientOfRecording('openai-messages', 'm.json')).toBeUndefined()
    expect(clientOfRecording('ctxgate', 'astroid1333.traj.json')).toBeUndefined()
  })
})
