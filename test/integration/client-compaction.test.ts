import Anthropic from '@anthropic-ai/sdk'
import { request } from 'undici'
import { beforeEach, describe, expect, it } from 'vitest'
import { output } from '../helpers/conversations.ts'
import { useAnthropicStack } from '../helpers/anthropic-stack.ts'

const anthropic = useAnthropicStack()
beforeEach(() => anthropic.stack.mock.reset())

const tools: Anthropic.Tool[] = [
  {
    name: 'read_file',
    description: 'Read a file',
    input_schema: { type: 'object', properties: { path: { type: 'string' } } },
  },
]

/** A few tool rounds, well over the model's minimum cacheable prefix. */
function history(task: string): Anthropic.MessageParam[] {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: task }]
  for (let round = 0; round < 3; round++) {
    const id = `toolu_${round}`
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `src/file-${round}.ts` } }],
    })
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: output('prose', 6_000, round) }],
    })
  }
  return messages
}

/** Every cache_control in the body the upstream received. */
function markersIn(body: string): number {
  return body.split('"cache_control"').length - 1
}

async function send(messages: Anthropic.MessageParam[], system?: string): Promise<string> {
  await anthropic.client.messages.create({
    model: 'claude-sonnet-5',
    max_tokens: 64,
    tools,
    messages,
    ...(system ? { system } : {}),
  })
  const received = anthropic.stack.mock.requests.at(-1)
  if (!received) throw new Error('the upstream saw no request')
  return received.body
}

const claudeCodePrompt =
  "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions."
const opencodePrompt =
  'Provide a detailed prompt for continuing our conversation above.\nFocus on information that would be helpful for continuing the conversation.'

describe("a client's compaction request", () => {
  it('gets ctxgate markers as an ordinary request, and none when it asks for the summary', async () => {
    const ordinary = await send([...history('Fix the build.'), { role: 'user', content: 'Now run the tests.' }])
    expect(markersIn(ordinary)).toBeGreaterThan(0)

    const compaction = await send([...history('Fix the build.'), { role: 'user', content: claudeCodePrompt }])
    expect(markersIn(compaction)).toBe(0)
    const line = anthropic.stack.logLines
      .map((raw) => JSON.parse(raw) as Record<string, unknown>)
      .findLast((entry) => 'clientCompaction' in entry)
    expect(line?.['clientCompaction']).toBe('claude-code')
  })

  it("recognises opencode's summary prompt and its compaction agent's system prompt", async () => {
    expect(markersIn(await send([...history('Add a flag.'), { role: 'user', content: opencodePrompt }]))).toBe(0)
    const system =
      'You are summarizing a conversation for continuation by another agent.\n\nProduce a structured summary.'
    expect(markersIn(await send([...history('Add a flag.'), { role: 'user', content: 'Go on.' }], system))).toBe(0)
  })

  it("keeps the client's own markers: only ctxgate's are left out", async () => {
    const messages = history('Fix the build.')
    messages[0] = {
      role: 'user',
      content: [{ type: 'text', text: 'Fix the build.', cache_control: { type: 'ephemeral' } }],
    }
    messages.push({ role: 'user', content: claudeCodePrompt })
    expect(markersIn(await send(messages))).toBe(1)
  })
})

/** Sum of a counter's samples with these labels, from the live /metrics text. */
async function scrape(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await request(`${anthropic.stack.proxyUrl}/metrics`)).body.text()
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .filter((line) => Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`)))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
}

describe('dead cache writes, live', () => {
  it('counts the tail a client edit cut off, as soon as the next answer shows it', async () => {
    const before = await scrape('ctxgate_dead_cache_write_tokens_total', { cause: 'client-edit' })
    const messages = history('Fix the flaky test.')
    await send(messages)
    // The client rewrote an old tool result: everything written after it is a branch no request takes.
    const edited = history('Fix the flaky test.')
    edited[2] = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'trimmed by the client' }],
    }
    await send([...edited, { role: 'user', content: 'Go on.' }])
    const after = await scrape('ctxgate_dead_cache_write_tokens_total', { cause: 'client-edit' })
    expect(after - before).toBeGreaterThan(1_000)
  })
})
