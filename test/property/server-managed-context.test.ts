import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Json } from '../helpers/conversations.ts'
import { createRewriter, sentBody } from '../helpers/rewrite.ts'
import { stepsArbitrary, wireFixtures, withoutMarkers } from '../helpers/wire-formats.ts'

const anthropic = wireFixtures.find((fixture) => fixture.format === 'anthropic-messages')
const responses = wireFixtures.find((fixture) => fixture.format === 'openai-responses')
if (!anthropic || !responses) throw new Error('fixtures missing')

const compactionBlock = { type: 'compaction', content: 'Summary of the earlier work.', encrypted_content: 'enc:AbC==' }
const anthropicManaged = fc.constantFrom<Json>(
  { context_management: { edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 3 } }] } },
  { context_management: { edits: [{ type: 'clear_thinking_20251015' }, { type: 'clear_tool_uses_20250919' }] } },
  { context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 } }] } },
  { withCompactionBlock: true },
)

/** The body as sent, with ctxgate's breakpoints (and the session key it adds) taken out. */
function withoutCtxgateMarks(body: Json): string {
  const { prompt_cache_key: _key, ...rest } = body
  return withoutMarkers(rest)
}

describe('a request that asks the server to manage its context', () => {
  it('Anthropic: comes out unchanged except for breakpoints, however far over budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        stepsArbitrary(2, 16),
        anthropicManaged,
        fc.integer({ min: 3_000, max: 30_000 }),
        async (steps, managed, window) => {
          const list = anthropic.conversation(steps)
          if (managed['withCompactionBlock']) {
            const first = list[0] as Json
            list[0] = {
              ...first,
              content: [compactionBlock, { type: 'text', text: String(first['content'] ?? 'go on') }],
            }
          }
          const extra = managed['withCompactionBlock'] ? {} : managed
          const original = anthropic.body(list, extra)
          const result = await createRewriter('anthropic-messages', window)(original)
          expect(result.kind).toBe('forward')
          const sent = sentBody(result)
          expect(withoutCtxgateMarks(sent)).toBe(withoutCtxgateMarks(original))
          if (managed['withCompactionBlock']) expect(JSON.stringify(sent)).toContain(JSON.stringify(compactionBlock))
        },
      ),
      { numRuns: 40 },
    )
  })

  it('Responses: with context_management compaction or a compaction item, only the session key is added', async () => {
    await fc.assert(
      fc.asyncProperty(
        stepsArbitrary(2, 16),
        fc.boolean(),
        fc.integer({ min: 3_000, max: 30_000 }),
        async (steps, asItem, window) => {
          const list = responses.conversation(steps)
          const compactionItem = { type: 'compaction', id: 'cmp_1', encrypted_content: 'enc:XyZ==' }
          const original = responses.body(
            asItem ? [compactionItem, ...list] : list,
            asItem ? {} : { context_management: [{ type: 'compaction', compact_threshold: 2_000 }] },
          )
          const result = await createRewriter('openai-responses', window)(original)
          expect(result.kind).toBe('forward')
          expect(withoutCtxgateMarks(sentBody(result))).toBe(withoutCtxgateMarks(original))
        },
      ),
      { numRuns: 40 },
    )
  })
})

describe('a top-level cache_control with a 1-hour TTL', () => {
  it('top-level cache_control ttl 1h plus ctxgate 5-minute markers on tools and system is refused upstream: ctxgate adds none before it', async () => {
    const original = anthropic.body(anthropic.conversation([]), {
      cache_control: { type: 'ephemeral', ttl: '1h' },
      system: [{ type: 'text', text: 'You are a careful engineer. '.repeat(400) }],
      tools: [{ name: 'bash', description: 'Runs a command. '.repeat(200), input_schema: { type: 'object' } }],
    })
    const result = await createRewriter('anthropic-messages', 200_000)(original)
    const sent = JSON.stringify(sentBody(result))
    // A 5-minute marker anywhere would come before the automatic 1-hour one on the last block.
    expect(sent.match(/"cache_control":\{"type":"ephemeral"\}/g) ?? []).toHaveLength(0)
    expect(sent).toContain('"cache_control":{"type":"ephemeral","ttl":"1h"}')
  })

  it('still fills free slots (other than the rolling one) under a 5-minute top-level marker', async () => {
    const original = anthropic.body(anthropic.conversation([]), {
      cache_control: { type: 'ephemeral' },
      system: [{ type: 'text', text: 'You are a careful engineer. '.repeat(400) }],
    })
    const sent = JSON.stringify(sentBody(await createRewriter('anthropic-messages', 200_000)(original)))
    expect(sent.match(/"cache_control":\{"type":"ephemeral"\}/g)?.length).toBeGreaterThan(1)
  })
})
