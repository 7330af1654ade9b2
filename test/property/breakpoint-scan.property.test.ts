import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { placeBreakpoints, scanMessages } from '../../src/providers/anthropic/cache-breakpoints.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { blocksOf, markable } from '../../src/providers/anthropic/blocks.ts'
import { isJsonObject, type Json } from '../../src/util/json.ts'

/** The walk as it was written before per-message facts were kept: every block of every message, each request. */
function scanAsBefore(messages: readonly Json[], start: number, nextEditResult?: string, followingEditResult?: string) {
  const lastMarkable: number[] = []
  const markers: { marked: unknown; position: number }[] = []
  let nextEdit: { position: number; message: number } | undefined
  let followingEdit: { position: number; message: number } | undefined
  let markableBefore: { position: number; message: number } | undefined
  const resultMarks: { id: string; position: number; message: number }[] = []
  const positions: number[] = []
  let position = start
  messages.forEach((message, index) => {
    positions.push(position)
    let last = -1
    for (const block of blocksOf(message)) {
      if (block['type'] === 'tool_result' && typeof block['tool_use_id'] === 'string' && markableBefore)
        resultMarks.push({ id: block['tool_use_id'], ...markableBefore })
      if (block['cache_control'] !== undefined) markers.push({ marked: block['cache_control'], position })
      if (Array.isArray(block['content']))
        for (const inner of block['content'] as unknown[])
          if (isJsonObject(inner) && inner['cache_control'] !== undefined)
            markers.push({ marked: inner['cache_control'], position })
      if (nextEdit === undefined && block['type'] === 'tool_result' && block['tool_use_id'] === nextEditResult)
        nextEdit = markableBefore
      if (
        followingEdit === undefined &&
        block['type'] === 'tool_result' &&
        block['tool_use_id'] === followingEditResult
      )
        followingEdit = markableBefore
      if (markable(block)) {
        last = position
        markableBefore = { position, message: index }
      }
      position++
    }
    lastMarkable.push(last)
  })
  return {
    lastMarkable,
    markers,
    ...(nextEdit ? { nextEdit } : {}),
    ...(followingEdit ? { followingEdit } : {}),
    ...(followingEditResult === undefined ? {} : { resultMarks }),
    end: position,
    positions: [...positions, position],
  }
}

const marker = fc.option(fc.constantFrom({ type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' }), { nil: undefined })
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.constantFrom('', ' ', 'hello'), cache_control: marker }),
  fc.record({ type: fc.constantFrom('thinking', 'redacted_thinking', 'compaction') }),
  fc.record({ type: fc.constant('tool_use'), id: fc.constantFrom('a', 'b', 'c') }),
  fc.record({
    type: fc.constant('tool_result'),
    tool_use_id: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
    content: fc.oneof(
      fc.constant('out'),
      fc.array(fc.record({ type: fc.constant('text'), text: fc.constant('x'), cache_control: marker }), {
        maxLength: 2,
      }),
    ),
    cache_control: marker,
  }),
  fc.constant('not a block'),
)
const message = fc.record({
  role: fc.constantFrom('user', 'assistant'),
  content: fc.oneof(fc.constantFrom('', 'plain text'), fc.array(block, { maxLength: 4 })),
})

/** Drops undefined members, as a JSON body would not carry them. */
const asJson = (value: unknown): Json => JSON.parse(JSON.stringify(value)) as Json

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

describe('the breakpoint scan over messages', () => {
  it('finds what the block-by-block walk found, for fresh and for shared (frozen, seen before) messages', () => {
    const id = fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined })
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.nat(5), id, id, (drawn, start, next, following) => {
        const fresh = drawn.map(asJson)
        const shared = fresh.map((item) => deepFreeze(structuredClone(item)))
        // Where a bridge may go: every result's mark, the following edit's among them.
        const expected = scanAsBefore(fresh, start, next, following)
        expect(scanMessages(fresh, start, next, following)).toEqual(expected)
        // Twice: the second walk reads the facts kept by the first.
        expect(scanMessages(shared, start, next, following)).toEqual(expected)
        expect(scanMessages(shared, start, next, following)).toEqual(expected)
      }),
    )
  })

  it('finds what the block-by-block walk found when each request carries the walk of a recent one', () => {
    const id = fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined })
    // A client's next list: its history again (the same frozen objects, or fresh copies of short
    // messages), its last messages changed or dropped, new ones after; now and then another conversation.
    const step = fc.record({
      keep: fc.nat(8),
      copied: fc.boolean(),
      added: fc.array(message, { maxLength: 3 }),
      start: fc.constantFrom(0, 0, 0, 2),
      next: id,
      following: id,
    })
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        let history: Json[] = []
        for (const { keep, copied, added, start, next, following } of steps) {
          const kept = history.slice(0, keep).map((item) => (copied ? asJson(item) : item))
          history = [...kept, ...added.map((item) => deepFreeze(asJson(item)))]
          const asSent = history.map(asJson)
          expect(scanMessages(history, start, next, following)).toEqual(scanAsBefore(asSent, start, next, following))
        }
      }),
    )
  })
})

/** Writing the chosen markers as it was done before the scan's positions were used: every message walked. */
function markAsBefore(body: Json, positions: ReadonlyMap<number, '1h' | undefined>): void {
  let position = 0
  const mark = (item: Json): Json => {
    const at = position++
    if (!positions.has(at)) return item
    const ttl = positions.get(at)
    return { ...item, cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' } }
  }
  if (Array.isArray(body['tools'])) body['tools'] = (body['tools'] as Json[]).map(mark)
  if (Array.isArray(body['system'])) body['system'] = (body['system'] as Json[]).map(mark)
  body['messages'] = (body['messages'] as Json[]).map((sent) => {
    const before = position
    position += blocksOf(sent).length
    if (![...positions.keys()].some((target) => target >= before && target < position)) return sent
    position = before
    return { ...sent, content: blocksOf(sent).map(mark) }
  })
}

/** Each block's marker, in the cache's order (tools, system, then every message's blocks). */
function markersInOrder(body: Json): unknown[] {
  const blocks = [
    ...((body['tools'] as Json[] | undefined) ?? []),
    ...((body['system'] as Json[] | undefined) ?? []),
    ...(body['messages'] as Json[]).flatMap((sent) => [...blocksOf(sent)]),
  ]
  return blocks.map((item) => item['cache_control'])
}

describe('placing breakpoints', () => {
  it('writes its markers where the walk over every message wrote them, copying only the messages they go in', () => {
    const tool = fc.record({ name: fc.constantFrom('read', 'grep') })
    const system = fc.record({ type: fc.constant('text'), text: fc.constantFrom('you are', 'be brief') })
    const id = fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined })
    fc.assert(
      fc.property(
        fc.array(tool, { maxLength: 2 }),
        fc.array(system, { maxLength: 2 }),
        fc.array(message, { minLength: 1, maxLength: 8 }),
        fc.nat(9),
        id,
        id,
        (tools, systemBlocks, drawn, tail, next, following) => {
          const body = asJson({ model: 'm', tools, system: systemBlocks, messages: drawn.map(asJson) })
          const sent = deepFreeze(structuredClone(body))
          const out: Json = { ...sent }
          const options = {
            edits: [],
            sessionId: '',
            previousTail: tail,
            ...(next === undefined ? {} : { nextEditResult: next }),
            ...(following === undefined ? {} : { followingEditResult: following }),
            minCacheableTokens: 0,
            thinkingBound: false,
            firstEditedMessage: -1,
            estimator: new TokenEstimator(),
          }
          const placed = placeBreakpoints(out, options, { head: () => 10, message: () => 10 })
          // The markers it chose, written the old way on the same body.
          const before = markersInOrder(sent)
          const chosen = new Map<number, '1h' | undefined>()
          markersInOrder(out).forEach((marked, position) => {
            if (marked !== before[position])
              chosen.set(position, (marked as { ttl?: '1h' }).ttl === '1h' ? '1h' : undefined)
          })
          // Every marker it counted is in the body.
          if (placed.promisedResult !== null) expect(chosen.size).toBe(placed.count)
          const expected: Json = { ...sent }
          markAsBefore(expected, chosen)
          expect(out).toEqual(expected)
          // Messages with no new marker are the client's own objects, not copies.
          ;(out['messages'] as Json[]).forEach((item, index) => {
            const same = item === (expected['messages'] as Json[])[index]
            expect(same).toBe(item === (sent['messages'] as Json[])[index])
          })
        },
      ),
    )
  })
})
