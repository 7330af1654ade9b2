import { describe, expect, it } from 'vitest'
import { anthropicAgentContent } from '../../src/mock/anthropic-agent.ts'
import { stepsDoneMarker } from '../../src/mock/agent-loop.ts'
import { openaiChatAgentReply } from '../../src/mock/openai-chat-agent.ts'
import { answerResponses, isRefusal } from '../../src/mock/openai-responses.ts'
import { OpenAIPromptCache } from '../../src/mock/prompt-cache.ts'

type Json = Record<string, unknown>
const bash = { name: 'bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }

/** Runs the Anthropic loop the way a client would, for `rounds` replies, keeping the whole history. */
function runAnthropic(rounds: number, steps: number): Json[] {
  const messages: Json[] = [{ role: 'user', content: 'go' }]
  for (let sequence = 1; sequence <= rounds; sequence++) {
    const content = anthropicAgentContent({ tools: [bash], messages }, steps, sequence) as Json[]
    messages.push({ role: 'assistant', content })
    const call = content.find((block) => block['type'] === 'tool_use')
    if (!call) break
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call['id'], content: 'output' }] })
  }
  return messages
}

const narrationOf = (content: Json[] | undefined) => String(content?.[0]?.['text'])

describe('the mock agent loop counts steps from what the agent echoed back', () => {
  it('carries on where it was after a proxy drops whole old rounds', () => {
    const history = runAnthropic(5, 10)
    expect(narrationOf(anthropicAgentContent({ tools: [bash], messages: history }, 10, 99))).toMatch(/^Step 6 of 10/)
    // Keep the prompt and only the newest round: the results' call ids still say step 5 was done.
    const dropped = [history[0], ...history.slice(-2)] as Json[]
    expect(narrationOf(anthropicAgentContent({ tools: [bash], messages: dropped }, 10, 99))).toMatch(/^Step 6 of 10/)
  })

  it('does the same on the Chat route', () => {
    const messages: Json[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_mock_s7_12', type: 'function', function: { name: 'bash', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_mock_s7_12', content: 'output' },
    ]
    const tools = [{ type: 'function', function: { name: 'bash', parameters: bash.input_schema } }]
    expect(openaiChatAgentReply({ tools, messages }, 10, 13)?.text).toMatch(/^Step 8 of 10/)
  })

  it("answers Codex's and opencode's compaction requests, which offer no tools, with a summary that keeps the count", () => {
    const codexPrompt =
      'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.'
    const history = runAnthropic(3, 10)
    const codex = anthropicAgentContent({ messages: [...history, { role: 'user', content: codexPrompt }] }, 10, 50)
    expect(narrationOf(codex)).toContain(`${stepsDoneMarker} 3 of 10`)
    // opencode quotes the whole conversation as text in one message to its summarization agent.
    const quoted = '<conversation>\n[Assistant]: Step 4 of 10: List.\n[Assistant tool call]: bash({})\n</conversation>'
    const opencode = anthropicAgentContent(
      { system: 'You are a context summarization agent.', messages: [{ role: 'user', content: quoted }] },
      10,
      51,
    )
    expect(narrationOf(opencode)).toContain(`${stepsDoneMarker} 4 of 10`)
    // A request that neither offers a shell nor asks for a summary (a title request) is not the loop's.
    expect(anthropicAgentContent({ system: 'You are a title generator.', messages: history }, 10, 52)).toBeUndefined()
  })
})

describe('the Responses loop', () => {
  const options = { windowFor: () => 200_000, minCacheableFor: () => 1024, replyText: (n: number) => `reply ${n}` }
  const turn = (input: unknown[], tools: Json[], sequence: number) => {
    const answer = answerResponses({
      request: { model: 'gpt-5', input, tools },
      options,
      cache: new OpenAIPromptCache(),
      replyKind: 'text',
      sequence,
      agentSteps: 10,
    })
    if (isRefusal(answer)) throw new Error(answer.error.message)
    return answer.response['output'] as Json[]
  }
  const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })

  it("knows opencode's bash {command, description} tool", () => {
    const tools = [
      {
        type: 'function',
        name: 'bash',
        parameters: { type: 'object', properties: { command: { type: 'string' }, description: { type: 'string' } } },
      },
    ]
    const [call] = turn([user('go')], tools, 1)
    expect(call).toMatchObject({ type: 'function_call', name: 'bash', call_id: 'call_mock_s1_1' })
    expect(JSON.parse(String(call?.['arguments']))).toEqual({ command: 'seq 1 3000', description: expect.any(String) })
  })

  it("resumes after Codex's compaction from the summary it put in a user message", () => {
    const tools = [{ type: 'function', name: 'exec_command', parameters: { properties: { cmd: {} } } }]
    const [summary] = turn(
      [user('go'), user('You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary.')],
      [],
      20,
    )
    const text = String(((summary?.['content'] as Json[] | undefined) ?? [])[0]?.['text'])
    expect(text).toContain(stepsDoneMarker)
    const after = turn(
      [user('go'), user(`Another language model produced this summary: ${text.replace('0 of', '6 of')}`)],
      tools,
      21,
    )
    expect(after[0]).toMatchObject({ type: 'function_call', call_id: 'call_mock_s7_21' })
  })
})
