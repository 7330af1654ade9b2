import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { sentBlock } from '../helpers/sent-blocks.ts'
import { useAnthropicStack } from '../helpers/anthropic-stack.ts'

const anthropic = useAnthropicStack()

const tools: Anthropic.Tool[] = [
  {
    name: 'Edit',
    description: 'Edit a file',
    input_schema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' } },
    },
  },
]

const code = (round: number, side: string): string =>
  Array.from({ length: 40 }, (_, line) => `  const ${side}_${round}_${line} = compute(${line}, "${side}")`).join('\n')

/**
 * The task, then `rounds` Edit calls with long old and new strings, each answered "ok". Three files,
 * each edited again three rounds later: an old edit is superseded, the kind the default clears.
 */
function conversation(rounds: number): Anthropic.MessageParam[] {
  return [
    { role: 'user', content: 'Edit the files as planned.' },
    ...Array.from({ length: rounds }, (_, round): Anthropic.MessageParam[] => [
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: `toolu_${round}`,
            name: 'Edit',
            input: {
              file_path: `src/f${round % 3}.ts`,
              old_string: code(round, 'old'),
              new_string: code(round, 'new'),
            },
          },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${round}`, content: 'ok' }] },
    ]).flat(),
  ]
}

describe('old tool inputs cleared through the proxy (Anthropic SDK)', () => {
  it('sends the upstream a cleared old input, and the identical block on the next request', async () => {
    const budget = { headers: { 'x-ctxgate-budget': '8000' } }
    const base = { model: 'claude-sonnet-5', max_tokens: 64, tools }
    await anthropic.client.messages.create({ ...base, messages: conversation(10) }, budget)
    await anthropic.client.messages.create({ ...base, messages: conversation(11) }, budget)
    const [first, second] = anthropic.stack.mock.requests
    const oldBlock = sentBlock(first?.body ?? '', 'tool_use', 'toolu_0')
    expect(JSON.parse(oldBlock)).toMatchObject({
      id: 'toolu_0',
      name: 'Edit',
      input: {
        file_path: 'src/f0.ts',
        old_string: expect.stringMatching(/^\[ctxgate: [\d,]+ characters of this old tool input cleared/),
        new_string: expect.stringContaining('read src/f0.ts to see the file as it is now'),
      },
    })
    // The newest rounds go as the client sent them.
    expect(JSON.parse(sentBlock(first?.body ?? '', 'tool_use', 'toolu_9')).input.old_string).toBe(code(9, 'old'))
    // Frozen: the next request carries the same bytes for that block.
    expect(sentBlock(second?.body ?? '', 'tool_use', 'toolu_0')).toBe(oldBlock)
    expect(second?.body).toContain(oldBlock)
  })
})
