import Anthropic from '@anthropic-ai/sdk'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

/** The task, then one Read round per file, each result about 2,000 tokens. */
function readRounds(files: readonly string[]): Anthropic.MessageParam[] {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Task: tidy up the modules.' }]
  files.forEach((file, index) => {
    const id = `toolu_read_${index}`
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: file } }],
    })
    messages.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: id, content: `// ${file}\n${'export const value = 1\n'.repeat(360)}` },
      ],
    })
  })
  return messages
}

async function scrape(stack: Stack): Promise<string> {
  return (await request(`${stack.proxyUrl}/metrics`)).body.text()
}

describe('re-fetches through ctxgate, with the Anthropic SDK', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({
      mock: { window: 20_000 },
      config: {
        models: [{ match: '*', window: 20_000, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      },
    })
  })
  afterAll(() => stack.close())

  it('counts a read of a file whose earlier read ctxgate folded or cleared, by tool, in metrics, the log and the session', async () => {
    const anthropic = new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-refetch',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'refetch-1' },
    })
    const files = Array.from({ length: 10 }, (_, index) => `src/module_${index}.ts`)
    const history = readRounds(files)
    for (let end = 3; end <= history.length; end += 2)
      await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: history.slice(0, end) })
    const sent = stack.mock.requests.at(-1)?.body ?? ''
    // The oldest read went out folded or cleared, not whole.
    expect(sent).not.toContain('// src/module_0.ts\\nexport')
    expect(sent).toMatch(/\[ctxgate[^\]]*module_0/)
    expect(await scrape(stack)).not.toContain('ctxgate_refetches_total{')

    // The agent reads the first file again.
    const again = readRounds([...files, 'src/module_0.ts'])
    await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: again })

    const metrics = await scrape(stack)
    expect(metrics).toContain('ctxgate_refetches_total{provider="anthropic",tool="Read"} 1')
    expect(metrics).toMatch(/ctxgate_refetch_tokens_total\{provider="anthropic",tool="Read"\} [1-9]\d+/)
    await eventually(() =>
      expect(
        requestLogs(stack)
          .filter((line) => line['session'] === 'refetch-1')
          .at(-1),
      ).toMatchObject({
        refetches: { count: 1, tools: ['Read'] },
      }),
    )
    await eventually(async () => {
      const session = (await (await request(`${stack.proxyUrl}/ctxgate/sessions/refetch-1`)).body.json()) as Record<
        string,
        number
      >
      expect(session['refetches']).toBe(1)
      expect(session['refetchTokens']).toBeGreaterThan(1_000)
    })
  })
})
