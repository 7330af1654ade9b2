import { describe, expect, it } from 'vitest'
import type { Conversation, Message } from '../../src/replay/conversation.ts'
import { replayConversation } from '../../src/replay/run-replay.ts'

/** A long tool loop: a long task, then 80 rounds of command output, each command run again every six rounds. */
function toolLoop(rounds: number): Conversation {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: `Keep the service healthy. ${'context '.repeat(3_000)}` }] },
  ]
  for (let round = 0; round < rounds; round++) {
    const id = `toolu_${round}`
    const command = `check-${round % 6}`
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${round}.` },
        { type: 'tool_use', id, name: 'run_shell', input: { command } },
      ],
    })
    const lines = Array.from(
      { length: 100 },
      (_, line) => `${command} line ${line} value ${(round * 7_919 + line * 104_729) % 1_000_003} status ok`,
    )
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: lines.join('\n') }] })
  }
  messages.push({ role: 'assistant', content: [{ type: 'text', text: 'Done.' }] })
  return {
    id: 'one-slot',
    source: 'test/one-slot',
    model: 'claude-sonnet-4-5',
    system: 'You are an agent. '.repeat(400),
    tools: [{ name: 'run_shell', description: 'Run a command.', input_schema: { type: 'object' } }],
    segments: [messages],
    notes: [],
  }
}

describe('replay with one marker slot left to ctxgate (the client marks its tools, system and newest block)', () => {
  it('bills the same under both cache-write readings, below the client alone', async () => {
    const conversation = toolLoop(80)
    const billed = async (cacheWrites: 'literal' | 'strict') => {
      const result = await replayConversation(conversation, {
        window: 1_000_000,
        minCacheableTokens: 1_024,
        maxTokens: 4_096,
        clientCache: 'tight',
        cacheWrites,
        stream: false,
        variants: [{ label: 'direct', direct: true }, { label: 'ctxgate' }],
      })
      return {
        direct: result.summaries['direct']?.billedEquivalentInput ?? 0,
        through: result.summaries['ctxgate']?.billedEquivalentInput ?? 0,
        batches: result.ledgers?.['ctxgate']?.['predicted_cost'] ?? 0,
      }
    }
    const literal = await billed('literal')
    const strict = await billed('strict')
    expect(literal.batches).toBeGreaterThan(0)
    // Under the strict reading a marker inside what was read writes nothing: each batch's one marker must both
    // read the entry the batch relies on and write the next one (a bridge within the lookback), or it reads the head.
    expect(strict.through).toBe(literal.through)
    expect(strict.through).toBeLessThan(strict.direct)
  }, 60_000)
})
