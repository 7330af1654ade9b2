import { describe, expect, it } from 'vitest'
import { compactionRequestOf } from '../../src/model-call/compaction-request.ts'

const codexPrompt =
  'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.'

describe('recognising a client compaction request', () => {
  it("finds Claude Code's prompt in a Messages body's last user turn, in a string or a text block", () => {
    const prompt = 'Your task is to create a detailed summary of the conversation so far, paying close attention to…'
    expect(compactionRequestOf({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: prompt }] })).toBe(
      'claude-code',
    )
    const partial = 'Your task is to create a detailed summary of the RECENT portion of the conversation.'
    expect(
      compactionRequestOf({
        model: 'claude-sonnet-5',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't', content: 'ok' },
              { type: 'text', text: partial },
            ],
          },
        ],
      }),
    ).toBe('claude-code')
    expect(
      compactionRequestOf({
        system: [{ type: 'text', text: 'You are a helpful AI assistant tasked with summarizing conversations.' }],
        messages: [{ role: 'user', content: 'hi' }],
      }),
    ).toBe('claude-code')
  })

  it("finds Codex's local compaction prompt as the last Responses input item", () => {
    const body = {
      model: 'gpt-5-codex',
      instructions: 'You are Codex.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the bug.' }] },
        { type: 'function_call_output', call_id: 'c1', output: 'done' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: codexPrompt }] },
      ],
    }
    expect(compactionRequestOf(body)).toBe('codex')
    expect(compactionRequestOf({ model: 'gpt-5', input: codexPrompt })).toBe('codex')
  })

  it("finds opencode's prompt in a Chat body, and its agent's prompt as a system message", () => {
    const last = {
      role: 'user',
      content: 'Provide a detailed prompt for continuing our conversation above.\nFocus on…',
    }
    expect(compactionRequestOf({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'go' }, last] })).toBe(
      'opencode',
    )
    const system = { role: 'system', content: 'You are summarizing a conversation for continuation by another agent.' }
    expect(compactionRequestOf({ model: 'gpt-4.1', messages: [system, { role: 'user', content: 'go' }] })).toBe(
      'opencode',
    )
  })

  it('leaves ordinary requests alone, a user asking for a summary in their own words included', () => {
    for (const content of [
      'Please summarize the conversation so far.',
      'Give me a summary of this session',
      'Run the tests.',
    ])
      expect(compactionRequestOf({ model: 'claude-sonnet-5', messages: [{ role: 'user', content }] })).toBeUndefined()
    // The prompt quoted in an earlier turn or in a tool result is not a request for a summary now.
    expect(
      compactionRequestOf({
        model: 'claude-sonnet-5',
        messages: [
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: codexPrompt }] },
          { role: 'assistant', content: 'Read it.' },
        ],
      }),
    ).toBeUndefined()
    expect(compactionRequestOf({ model: 'x' })).toBeUndefined()
  })
})
