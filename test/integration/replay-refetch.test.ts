import { describe, expect, it } from 'vitest'
import type { Conversation, Message } from '../../src/replay/conversation.ts'
import { repeatedCalls } from '../../src/replay/refetches.ts'
import { refetchRows } from '../../src/replay/report/refetch-table.ts'
import { replayConversation } from '../../src/replay/run-replay.ts'

/** The task, one Read round per file (about 2,000 tokens each), then a final answer. */
function readRun(files: readonly string[]): Conversation {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Task: tidy up the modules.' }] }]
  files.forEach((file, index) => {
    const id = `toolu_read_${index}`
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: file } }] })
    messages.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: id, content: `// ${file}\n${'export const value = 1\n'.repeat(360)}` },
      ],
    })
  })
  messages.push({ role: 'assistant', content: [{ type: 'text', text: 'Done.' }] })
  return {
    id: 'reads',
    source: 'reads.jsonl',
    model: 'claude-sonnet-4-5',
    system: 'You are an agent.',
    tools: [],
    segments: [messages],
    notes: [],
  }
}

const files = Array.from({ length: 10 }, (_, index) => `src/module_${index}.ts`)

describe('re-fetches in replay', () => {
  it('the baseline counts the calls the recording repeats within the window, with its whole context', () => {
    expect(repeatedCalls(readRun(files))).toBe(0)
    expect(repeatedCalls(readRun([...files, 'src/module_0.ts', './src/module_3.ts']))).toBe(2)
    // Beyond the 20-request window a repeat is not one.
    const far = Array.from({ length: 22 }, (_, index) => `src/far_${index}.ts`)
    expect(repeatedCalls(readRun(['src/first.ts', ...far, 'src/first.ts']))).toBe(0)
  })

  it('counts, per ctxgate variant, the repeats that landed on a result ctxgate cleared or folded, as the proxy does live', async () => {
    const run = readRun([...files, 'src/module_0.ts'])
    const result = await replayConversation(run, {
      window: 20_000,
      minCacheableTokens: 1024,
      maxTokens: 64,
      clientCache: 'rolling',
      stream: false,
      variants: [{ label: 'direct', direct: true }, { label: 'ctxgate' }],
    })
    expect(result.repeats).toEqual({ requests: 12, calls: 1 })
    // The first read was edited by the time the agent read it again: one re-fetch, of about 2,000 tokens.
    expect(result.refetches?.['ctxgate']?.count).toBe(1)
    expect(result.refetches?.['ctxgate']?.tokens).toBeGreaterThan(1_000)
    expect(result.refetches?.['direct']).toBeUndefined()
    const rows = refetchRows([result], ['direct', 'ctxgate'])
    expect(rows.map((row) => [row.run, row.variant, row.refetches, row.baseline])).toEqual([
      ['reads', 'ctxgate', 1, 1],
      ['all runs', 'ctxgate', 1, 1],
    ])
  })
})
