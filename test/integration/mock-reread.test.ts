import Anthropic from '@anthropic-ai/sdk'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

const bash: Anthropic.Tool = {
  name: 'Bash',
  description: 'Run a shell command',
  input_schema: { type: 'object', properties: { command: { type: 'string' }, description: { type: 'string' } } },
}

describe("the mock's re-read loop through ctxgate, with the Anthropic SDK", () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({
      mock: { window: 20_000, agentSteps: 12, agentRereadEvery: 5 },
      config: {
        models: [{ match: '*', window: 20_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      },
    })
  })
  afterAll(() => stack.close())

  it('asks to read again files read many steps before, and ctxgate counts the reads of what it cleared as re-fetches', async () => {
    const anthropic = new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-reread',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'reread-1' },
    })
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Run 12 shell commands, one after another.' }]
    const commands: string[] = []
    for (let turn = 0; turn < 13; turn++) {
      const reply = await anthropic.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        tools: [bash],
        messages,
      })
      const call = reply.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')
      if (!call) break
      const command = String((call.input as { command: string }).command)
      commands.push(command)
      messages.push({ role: 'assistant', content: reply.content })
      // Each command "prints" about 3,000 tokens, so ctxgate has to clear old results as the loop goes on.
      const output = `$ ${command}\n${`${command} line of output\n`.repeat(400)}`
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: output }] })
    }
    expect(commands).toHaveLength(12)
    // Steps 5 and 10 read again the files steps 1 and 2 read; nothing else repeats.
    expect(commands[4]).toBe(commands[0])
    expect(commands[9]).toBe(commands[1])
    expect(new Set(commands).size).toBe(10)
    const session = (await (await request(`${stack.proxyUrl}/ctxgate/sessions/reread-1`)).body.json()) as Record<
      string,
      number
    >
    // At least the re-read at step 10 finds the step-2 read cleared; no other call can count.
    expect(session['refetches']).toBeGreaterThanOrEqual(1)
    expect(session['refetches']).toBeLessThanOrEqual(2)
    expect(session['refetchTokens']).toBeGreaterThan(1_000)
  })
})
