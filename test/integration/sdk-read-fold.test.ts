import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { sentBlock } from '../helpers/sent-blocks.ts'
import { useAnthropicStack } from '../helpers/anthropic-stack.ts'

const anthropic = useAnthropicStack()

const tools: Anthropic.Tool[] = [
  {
    name: 'Read',
    description: 'Read a file',
    input_schema: { type: 'object', properties: { file_path: { type: 'string' } } },
  },
  {
    name: 'Bash',
    description: 'Run a command',
    input_schema: { type: 'object', properties: { command: { type: 'string' } } },
  },
]

const prose = (at: number): string => `Paragraph ${at} explains why the phases read their documents this way.`
/** A design document as Claude Code's Read prints it: numbered lines, mostly prose, one code block. */
const design = [
  '# Design',
  ...Array.from({ length: 150 }, (_, at) => prose(at)),
  '```typescript',
  'const scenarioContext = this.buildOptionalContext(',
  '```',
  ...Array.from({ length: 150 }, (_, at) => prose(at + 150)),
]
  .map((line, at) => `${String(at + 1).padStart(6)}→${line}`)
  .join('\n')

/** The task, a Read of the design document, then `commands` short Bash rounds. */
function conversation(commands: number): Anthropic.MessageParam[] {
  const round = (id: string, name: string, input: Record<string, string>, output: string): Anthropic.MessageParam[] => [
    { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] },
  ]
  return [
    { role: 'user', content: 'Implement the design.' },
    ...round('toolu_read', 'Read', { file_path: 'docs/design.md' }, design),
    ...Array.from({ length: commands }, (_, at) => round(`toolu_${at}`, 'Bash', { command: `ls ${at}` }, 'ok')).flat(),
  ]
}

describe('a read folded to its quotable lines through the proxy (Anthropic SDK)', () => {
  it('sends the upstream the read folded to its code and headings, and the identical block on the next request', async () => {
    const budget = { headers: { 'x-ctxgate-budget': '3000' } }
    const base = { model: 'claude-sonnet-5', max_tokens: 64, tools }
    await anthropic.client.messages.create({ ...base, messages: conversation(2) }, budget)
    await anthropic.client.messages.create({ ...base, messages: conversation(3) }, budget)
    const [first, second] = anthropic.stack.mock.requests
    const folded = sentBlock(first?.body ?? '', 'tool_result', 'toolu_read')
    const text = JSON.stringify(JSON.parse(folded).content)
    expect(text).toContain('[ctxgate folded this read of docs/design.md to')
    expect(text).toContain('const scenarioContext = this.buildOptionalContext(')
    expect(text).toContain('# Design')
    expect(text).not.toContain(prose(7))
    // Frozen: the next request carries the same bytes for that block, its call unchanged before it.
    expect(sentBlock(second?.body ?? '', 'tool_result', 'toolu_read')).toBe(folded)
    expect(second?.body).toContain('"id":"toolu_read","name":"Read","input":{"file_path":"docs/design.md"}')
  })
})
