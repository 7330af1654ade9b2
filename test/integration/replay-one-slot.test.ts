import { describe, expect, it } from 'vitest'
import type { Conversation, Message } from '../../src/replay/conversation.ts'
import { replayConversation } from '../../src/replay/run-replay.ts'

/** A long tool loop: a task of `taskWords` words, then rounds of command output, each command run again every six rounds. */
function toolLoop(rounds: number, taskWords = 3_000): Conversation {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: `Keep the service healthy. ${'context '.repeat(taskWords)}` }] },
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

const billed = async (
  clientCache: 'tight' | 'full',
  cacheWrites: 'literal' | 'strict',
  rounds = 80,
  taskWords?: number,
) => {
  const result = await replayConversation(toolLoop(rounds, taskWords), {
    window: 1_000_000,
    minCacheableTokens: 1_024,
    maxTokens: 4_096,
    clientCache,
    cacheWrites,
    stream: false,
    variants: [{ label: 'direct', direct: true }, { label: 'ctxgate' }],
  })
  const ledger = result.ledgers?.['ctxgate']
  return {
    direct: result.summaries['direct']?.billedEquivalentInput ?? 0,
    through: result.summaries['ctxgate']?.billedEquivalentInput ?? 0,
    batches: ledger?.['predicted_cost'] ?? 0,
    predicted: ledger?.['predicted_cost'] ?? 0,
    realized: ledger?.['realized_rewrite'] ?? 0,
  }
}

describe('replay with one marker slot left to ctxgate (the client marks its tools, system and newest block)', () => {
  it('bills the same under both cache-write readings, below the client alone', async () => {
    const literal = await billed('tight', 'literal')
    const strict = await billed('tight', 'strict')
    expect(literal.batches).toBeGreaterThan(0)
    // Under the strict reading a marker inside what was read writes nothing: each batch's one marker must both
    // read the entry the batch relies on and write the next one (a bridge within the lookback), or it reads the head.
    expect(strict.through).toBe(literal.through)
    expect(strict.through).toBeLessThan(strict.direct)
  }, 60_000)
})

describe('replay with every marker slot the client’s (tools, system and the newest two messages, as opencode)', () => {
  it('prices a batch as rewriting from the head, as it does: the ledger’s realized rewrite is what it predicted', async () => {
    for (const reading of ['literal', 'strict'] as const) {
      // A long task first: a batch that reads no further than the head writes it again.
      const run = await billed('full', reading, 60, 30_000)
      expect(run.predicted).toBeGreaterThan(0)
      // No marker of ctxgate's can read an entry past the head: priced as reading one, a batch undercounts its rewrite.
      expect(run.realized).toBeLessThanOrEqual(run.predicted * 1.1)
    }
  }, 60_000)
})
