import { describe, expect, it } from 'vitest'
import { agentFingerprint } from '../../src/providers/adapter-contract.ts'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { openaiChatAdapter } from '../../src/providers/openai/chat-adapter.ts'
import { openaiResponsesAdapter } from '../../src/providers/openai/responses-adapter.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import type { Json } from '../../src/util/json.ts'
import { sessionKind } from '../../src/session/session-kind.ts'

const estimator = new TokenEstimator()
const instructions = `You are a coding agent. ${'Follow the repository conventions. '.repeat(80)}`
const environment = (day: number, directory: string) =>
  `\nToday's date: 2026-11-${day}. Working directory: ${directory}`
const anthropicTools = [
  { name: 'bash', description: 'Run a command.', input_schema: { type: 'object' } },
  { name: 'read_file', description: 'Read a file.', input_schema: { type: 'object' } },
]

function anthropicAgent(body: Json): string | undefined {
  return anthropicMessagesAdapter.sessionHints(body, anthropicMessagesAdapter.view(body, estimator)).agent
}

describe('the kind of session finished lengths are grouped by', () => {
  it('is the same agent in every session: what agents append to their system prompt later does not change it', () => {
    const monday = {
      model: 'claude-sonnet-4-5',
      max_tokens: 10,
      tools: anthropicTools,
      messages: [{ role: 'user', content: 'Fix the build.' }],
      system: instructions + environment(23, '/src/app'),
    }
    const friday = {
      ...monday,
      messages: [{ role: 'user', content: 'Add a test.' }],
      system: [{ type: 'text', text: instructions + environment(27, '~/code/other-repo') }],
    }
    expect(anthropicAgent(monday)).toBe(anthropicAgent(friday))
    expect(anthropicAgent({ ...monday, tools: anthropicTools.slice(0, 1) })).not.toBe(anthropicAgent(monday))
    expect(anthropicAgent({ ...monday, system: `You are a reviewer. ${instructions}` })).not.toBe(
      anthropicAgent(monday),
    )
  })

  it('reads the head of every wire format: tool names and the system prompt wherever it sits', () => {
    const functions = anthropicTools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, parameters: {} },
    }))
    const chat: Json = {
      model: 'gpt-5',
      tools: functions,
      messages: [
        { role: 'system', content: instructions },
        { role: 'user', content: 'Fix the build.' },
      ],
    }
    const responses: Json = {
      model: 'gpt-5',
      instructions,
      tools: anthropicTools.map((tool) => ({ type: 'function', name: tool.name, parameters: {} })),
      input: 'Fix the build.',
    }
    const expected = agentFingerprint(anthropicTools, [instructions])
    expect(openaiChatAdapter.sessionHints(chat, openaiChatAdapter.view(chat, estimator)).agent).toBe(expected)
    expect(
      openaiResponsesAdapter.sessionHints(responses, openaiResponsesAdapter.view(responses, estimator)).agent,
    ).toBe(expected)
  })

  it('is kept per tenant when clients authenticate, one pool otherwise, and per model family', () => {
    const agent = agentFingerprint(anthropicTools, [instructions])
    const tenantA = sessionKind('tenant:aaaa', 'claude-sonnet-4-5', agent)
    expect(sessionKind('tenant:bbbb', 'claude-sonnet-4-5', agent)).not.toBe(tenantA)
    expect(sessionKind('tenant:aaaa', 'claude-sonnet-4-5-20250929', agent)).toBe(tenantA)
    expect(sessionKind('tenant:aaaa', 'claude-opus-4-5', agent)).not.toBe(tenantA)
    // Without authentication the limit scope is the conversation; finished sessions still pool across conversations.
    expect(sessionKind('conversation:one/h1', 'claude-sonnet-4-5', agent)).toBe(
      sessionKind('conversation:two/h2', 'claude-sonnet-4-5', agent),
    )
    expect(sessionKind('conversation:one/h1', 'x'.repeat(10_000), agent).length).toBeLessThan(40)
  })
})
