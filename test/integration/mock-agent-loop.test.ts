import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stepsDoneMarker } from '../../src/mock/agent-loop.ts'
import { startMockServer, type MockServer } from '../../src/mock/server.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

const steps = 6
let mock: MockServer
let anthropic: Anthropic
let openai: OpenAI

beforeAll(async () => {
  mock = await startMockServer({ agentSteps: steps })
  anthropic = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0 })
  openai = new OpenAI({ baseURL: `${mock.url}/v1`, apiKey: 'k', maxRetries: 0 })
})
afterAll(() => mock.close())

const bashTool: Anthropic.Tool = {
  name: 'Bash',
  description: 'Run a shell command',
  input_schema: {
    type: 'object',
    properties: { command: { type: 'string' }, description: { type: 'string' } },
    required: ['command'],
  },
}
const readTool: Anthropic.Tool = {
  name: 'Read',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' } } },
}

/** What the client-side loop "ran": nothing; every command gets the same canned, sizeable output. */
const cannedOutput = (command: string): string => `$ ${command}\n${'canned line of output\n'.repeat(150)}`

interface LoopRun {
  readonly commands: string[]
  readonly finalText: string
  readonly usages: Anthropic.Usage[]
}

type Turn = (params: Anthropic.MessageCreateParamsNonStreaming) => Promise<Anthropic.Message>

/** A minimal agent: send, run each tool call (cannedly), send the results back, until a text answer. */
async function anthropicLoop(client: Anthropic, turn: Turn, checkCounts = true): Promise<LoopRun> {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Run the commands, please.' }]
  const run: LoopRun = { commands: [], finalText: '', usages: [] }
  for (let index = 0; index < 50; index++) {
    const last = messages[messages.length - 1] as Anthropic.MessageParam
    if (Array.isArray(last.content)) {
      const blocks = last.content
      blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: { type: 'ephemeral' } } as never
    }
    const params = { model: 'claude-mock-1', max_tokens: 1024, tools: [readTool, bashTool], messages }
    const message = await turn(params)
    run.usages.push(message.usage)
    if (checkCounts) {
      // Same request, counted: the answer's input + read + write must add up to it.
      const counted = await client.messages.countTokens({ model: params.model, tools: params.tools, messages })
      const usage = message.usage
      expect(usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0)).toBe(
        counted.input_tokens,
      )
    }
    if (Array.isArray(last.content))
      delete (last.content[last.content.length - 1] as { cache_control?: unknown }).cache_control
    messages.push({ role: 'assistant', content: message.content })
    const calls = message.content.filter((block) => block.type === 'tool_use')
    if (message.stop_reason !== 'tool_use') {
      expect(calls).toEqual([])
      return { ...run, finalText: message.content.map((block) => (block.type === 'text' ? block.text : '')).join('') }
    }
    const results = calls.map((call): Anthropic.ToolResultBlockParam => {
      expect(call.name).toBe('Bash')
      const input = call.input as { command: string; description: string }
      expect(input.description.length).toBeGreaterThan(0)
      run.commands.push(input.command)
      return { type: 'tool_result', tool_use_id: call.id, content: cannedOutput(input.command) }
    })
    messages.push({ role: 'user', content: results })
  }
  throw new Error('the loop did not end within 50 turns')
}

describe('agent tool loop, Anthropic Messages through the official SDK', () => {
  it('non-streaming: N shell calls, then a text answer, with usage that adds up and cache reads that grow', async () => {
    const run = await anthropicLoop(anthropic, (params) => anthropic.messages.create(params))
    expect(run.commands).toHaveLength(steps)
    expect(new Set(run.commands).size).toBe(steps)
    expect(run.commands[0]).toBe('seq 1 4000')
    expect(run.finalText).toContain(`All ${steps} steps are done`)
    const reads = run.usages.map((usage) => usage.cache_read_input_tokens ?? 0)
    expect(reads[0]).toBe(0)
    expect(reads.at(-1)).toBeGreaterThan(0)
    // Once the prefix passes the minimum cacheable length, every step reads more than the one before.
    for (let index = reads.findIndex((read) => read > 0) + 1; index < reads.length; index++)
      expect(reads[index]).toBeGreaterThan(reads[index - 1] as number)
    expect(run.usages.every((usage) => usage.output_tokens > 0)).toBe(true)
  })

  it('streaming: the same loop through the SDK stream helper (text, then a tool call parsed from JSON deltas)', async () => {
    const narrations: string[] = []
    const run = await anthropicLoop(anthropic, async (params) => {
      const stream = anthropic.messages.stream(params)
      let text = ''
      stream.on('text', (delta) => (text += delta))
      const message = await stream.finalMessage()
      if (message.stop_reason === 'tool_use') narrations.push(text)
      return message
    })
    expect(run.commands).toHaveLength(steps)
    expect(narrations[0]).toBe('Step 1 of 6: Count from 1 to 4000.')
    expect(run.usages.at(-1)?.cache_read_input_tokens).toBeGreaterThan(0)
  })

  it('ends after N steps when the history was compacted on the way', async () => {
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Run the commands.' }]
    const tools = [bashTool]
    for (let index = 0; index < 2; index++) {
      const message = await anthropic.messages.create({ model: 'm', max_tokens: 64, tools, messages: history })
      const call = message.content.find((block) => block.type === 'tool_use') as Anthropic.ToolUseBlock
      history.push({ role: 'assistant', content: message.content })
      history.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'ok' }] })
    }
    const summaryPrompt = 'Your task is to create a detailed summary of the conversation so far.'
    const summary = await anthropic.messages.create({
      model: 'm',
      max_tokens: 64,
      tools,
      messages: [
        ...history.slice(0, -1),
        {
          role: 'user',
          content: [
            ...((history.at(-1) as Anthropic.MessageParam).content as Anthropic.ContentBlockParam[]),
            { type: 'text', text: summaryPrompt },
          ],
        },
      ],
    })
    const summaryText = summary.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
    expect(summary.stop_reason).toBe('end_turn')
    expect(summaryText).toContain(`${stepsDoneMarker} 2 of ${steps}`)
    const resumed = await anthropic.messages.create({
      model: 'm',
      max_tokens: 64,
      tools,
      messages: [{ role: 'user', content: `Continued from a previous conversation:\n${summaryText}` }],
    })
    expect(resumed.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Step 3 of 6/) })
  })

  it('answers in plain text when no shell is offered or tools are switched off', async () => {
    const noShell = await anthropic.messages.create({
      model: 'm',
      max_tokens: 64,
      tools: [readTool],
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(noShell.stop_reason).toBe('end_turn')
    const switchedOff = await anthropic.messages.create({
      model: 'm',
      max_tokens: 64,
      tools: [bashTool],
      tool_choice: { type: 'none' },
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(switchedOff.content.map((block) => block.type)).toEqual(['text'])
  })

  it('leaves a mock started without --agent-steps answering in text', async () => {
    const plain = await startMockServer()
    try {
      const client = new Anthropic({ baseURL: plain.url, apiKey: 'k', maxRetries: 0 })
      const message = await client.messages.create({
        model: 'm',
        max_tokens: 64,
        tools: [bashTool],
        messages: [{ role: 'user', content: 'hi' }],
      })
      expect(message.stop_reason).toBe('end_turn')
    } finally {
      await plain.close()
    }
  })
})

describe('agent tool loop, OpenAI Chat Completions through the official SDK', () => {
  const functionTool = (name: string, command: Record<string, unknown>): OpenAI.ChatCompletionTool => ({
    type: 'function',
    function: { name, parameters: { type: 'object', properties: { command }, required: ['command'] } },
  })
  const lookup = functionTool('lookup_weather', { type: 'string' })

  async function chatLoop(
    tools: OpenAI.ChatCompletionTool[],
    turn: (params: OpenAI.ChatCompletionCreateParamsNonStreaming) => Promise<OpenAI.ChatCompletion>,
  ): Promise<{ commands: unknown[]; final: string; cached: number[] }> {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a careful operator.' },
      { role: 'user', content: 'Run the commands, please.' },
    ]
    const commands: unknown[] = []
    const cached: number[] = []
    for (let index = 0; index < 50; index++) {
      const completion = await turn({ model: 'gpt-5', tools, messages, prompt_cache_key: 'loop-test' })
      const message = completion.choices[0]?.message as OpenAI.ChatCompletionMessage
      cached.push(completion.usage?.prompt_tokens_details?.cached_tokens ?? 0)
      messages.push(message)
      if (completion.choices[0]?.finish_reason !== 'tool_calls')
        return { commands, final: message.content ?? '', cached }
      for (const call of message.tool_calls ?? []) {
        if (call.type !== 'function') continue
        const args = JSON.parse(call.function.arguments) as { command: unknown }
        commands.push(args.command)
        messages.push({ role: 'tool', tool_call_id: call.id, content: cannedOutput(String(args.command)) })
      }
    }
    throw new Error('the loop did not end within 50 turns')
  }

  it('non-streaming: N calls of a run_command function, then a text answer, with cached prompt tokens', async () => {
    const run = await chatLoop([lookup, functionTool('run_command', { type: 'string' })], (params) =>
      openai.chat.completions.create(params),
    )
    expect(run.commands).toHaveLength(steps)
    expect(run.commands[1]).toBe('ls -laR /usr/share/doc | head -n 350')
    expect(run.final).toContain(`All ${steps} steps are done`)
    expect(run.cached.at(-1)).toBeGreaterThan(0)
  })

  it('streaming: a shell function taking an argument list, assembled from stream chunks by the SDK', async () => {
    const run = await chatLoop([functionTool('shell', { type: 'array', items: { type: 'string' } })], (params) =>
      openai.chat.completions
        .stream({ ...params, stream: true, stream_options: { include_usage: true } })
        .finalChatCompletion(),
    )
    expect(run.commands).toHaveLength(steps)
    expect(run.commands[0]).toEqual(['bash', '-lc', 'seq 1 4000'])
    expect(run.final).toContain(`All ${steps} steps are done`)
  })

  it('answers in text when no shell-like function is offered', async () => {
    const completion = await openai.chat.completions.create({
      model: 'gpt-5',
      tools: [lookup],
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(completion.choices[0]?.finish_reason).toBe('stop')
  })
})

describe('agent tool loop through ctxgate', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ mock: { agentSteps: 12, window: 8_000 } })
  })
  afterAll(() => stack.close())

  it('runs to the end at a window the loop outgrows, because ctxgate keeps each request under it', async () => {
    const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'k', maxRetries: 0 })
    // ctxgate rewrites the Messages request but counts are taken of the client's own, so skip that check.
    const run = await anthropicLoop(client, (params) => client.messages.stream(params).finalMessage(), false)
    expect(run.commands).toHaveLength(12)
    const totals = stack.mock.usage.totals()
    expect(totals.requests).toBe(13)
    expect(totals.largestPromptTokens).toBeLessThanOrEqual(8_000)
    const direct = await request(`${stack.mock.url}/_mock/usage`)
    expect(await direct.body.json()).toEqual(totals)
    // The same loop straight to the mock outgrows the window (prompt and max_tokens share it).
    const straight = new Anthropic({ baseURL: stack.mock.url, apiKey: 'k', maxRetries: 0 })
    await expect(anthropicLoop(straight, (params) => straight.messages.create(params), false)).rejects.toMatchObject({
      status: 400,
      error: {
        error: {
          message: expect.stringMatching(
            /^(prompt is too long: \d+ tokens > 8000 maximum|input length and `max_tokens` exceed context limit: \d+ \+ \d+ > 8000, .*)$/,
          ),
        },
      },
    })
  })
})
