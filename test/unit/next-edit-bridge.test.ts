import { describe, expect, it } from 'vitest'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { bridgeMark, oneMarker, type ResultMark } from '../../src/providers/anthropic/next-edit-bridge.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import type { Json } from '../../src/util/json.ts'
import { markedBlocks, twoMarkedSystemBlocks } from '../helpers/cache-marks.ts'

const marks: ResultMark[] = Array.from({ length: 12 }, (_, index) => ({
  id: `t${index}`,
  position: 10 + 3 * index,
  message: 2 * index + 1,
}))

describe('bridgeMark', () => {
  it('goes as far towards the following edit as a read by lookback allows (20 positions, the marker first)', () => {
    // Read at 10 (t0); positions 13, 16, …, 28 are within 19 of it; 31 is not.
    expect(bridgeMark(marks, { position: 10 }, { position: 40 })?.id).toBe('t6')
    // Never past the following edit.
    expect(bridgeMark(marks, { position: 10 }, { position: 19 })?.id).toBe('t3')
    // The read entry's own position is no bridge: the marker would write nothing new.
    expect(bridgeMark(marks, { position: 10 }, { position: 10 })).toBeUndefined()
    expect(bridgeMark(marks.slice(0, 1), { position: 10 }, { position: 40 })).toBeUndefined()
  })
})

describe('oneMarker', () => {
  const read = { position: 10, message: 1 }
  const following = { position: 40, message: 21 }
  const bridge = marks[6] as ResultMark
  it('bridges when what lies between the bridge and the following edit is less than what a jump gives up', () => {
    const tokens = (from: number, to: number) => (from === 0 ? 5_000 : (to - from) * 50)
    expect(oneMarker(bridge, read, following, tokens)).toEqual({ at: bridge, promisedResult: 't6' })
  })
  it('goes to the following edit itself when that stretch outweighs the part before the entry read', () => {
    const tokens = (from: number, to: number) => (from === 0 ? 500 : (to - from) * 500)
    expect(oneMarker(bridge, read, following, tokens)).toEqual({ at: following })
    expect(oneMarker(undefined, read, following, () => 0)).toEqual({ at: following })
  })
})

describe('the Anthropic adapter with one free marker slot on a batch request', () => {
  const estimator = new TokenEstimator()
  // A long first message, then rounds whose results are small: the stretch a bridge leaves is cheap.
  const body = (resultText: (index: number) => string): Json => {
    const messages: Json[] = [{ role: 'user', content: `Task. ${'Background of the task in detail. '.repeat(400)}` }]
    for (let index = 0; index < 30; index++) {
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${index}`, name: 'read', input: {} }] })
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `t${index}`, content: resultText(index) }],
      })
    }
    ;((messages.at(-1) as Json)['content'] as Json[])[0]!['cache_control'] = { type: 'ephemeral' }
    // Like Claude Code: two system blocks and the newest block marked, so ctxgate has one slot.
    return {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: twoMarkedSystemBlocks,
      messages,
    }
  }
  const apply = (sent: Json) =>
    anthropicMessagesAdapter.apply(sent, anthropicMessagesAdapter.view(sent, estimator), {
      edits: [],
      sessionId: 's',
      nextEditResult: 't1',
      followingEditResult: 't25',
      minCacheableTokens: 0,
      thinkingBound: false,
      firstEditedMessage: -1,
      estimator,
    })
  const markedAt = markedBlocks

  it('puts its one marker within lookback of the entry it reads, and says which result the next batch may start at', () => {
    const applied = apply(body(() => 'ok'))
    // Ahead of t1: the tool_use in message 3 (position 4 after two system blocks); two positions per round,
    // so the furthest within 19 is ahead of t10 (message 21, position 22).
    expect(markedAt(applied.body)).toEqual(['21.0', '60.0'])
    expect(applied.promisedResult).toBe('t10')
  })

  it('marks the following edit itself when the results in between outweigh the part before the entry it reads', () => {
    const applied = apply(body((index) => `${index} `.repeat(2_000)))
    expect(markedAt(applied.body)).toEqual(['51.0', '60.0'])
    expect(applied.promisedResult).toBeUndefined()
  })

  it('marks both where it reads and where the next batch starts when two slots are free', () => {
    const sent = body(() => 'ok')
    sent['system'] = [{ type: 'text', text: 'A B', cache_control: { type: 'ephemeral' } }]
    const applied = apply(sent)
    expect(markedAt(applied.body)).toEqual(['3.0', '51.0', '60.0'])
    expect(applied.promisedResult).toBeUndefined()
  })

  it('says no promise is backed when the client’s markers fill every slot (as opencode’s four do)', () => {
    const sent = body(() => 'ok')
    const messages = sent['messages'] as Json[]
    ;((messages.at(-2) as Json)['content'] as Json[])[0]!['cache_control'] = { type: 'ephemeral' }
    const applied = apply(sent)
    expect(markedAt(applied.body)).toEqual(['59.0', '60.0'])
    expect(applied.breakpoints).toBe(0)
    expect(applied.promisedResult).toBeNull()
  })
})
