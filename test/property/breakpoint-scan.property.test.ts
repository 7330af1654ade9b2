import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { scanMessages } from '../../src/providers/anthropic/cache-breakpoints.ts'
import { blocksOf, markable } from '../../src/providers/anthropic/blocks.ts'
import { isJsonObject, type Json } from '../../src/util/json.ts'

/** The walk as it was written before per-message facts were kept: every block of every message, each request. */
function scanAsBefore(messages: readonly Json[], start: number, nextEditResult?: string, followingEditResult?: string) {
  const lastMarkable: number[] = []
  const markers: { marked: unknown; position: number }[] = []
  let nextEdit: { position: number; message: number } | undefined
  let followingEdit: { position: number; message: number } | undefined
  let markableBefore: { position: number; message: number } | undefined
  let position = start
  messages.forEach((message, index) => {
    let last = -1
    for (const block of blocksOf(message)) {
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
    end: position,
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
        const expected = scanAsBefore(fresh, start, next, following)
        // Where a bridge may go: every result's mark, the following edit's among them.
        const scanned = ({ resultMarks, ...rest }: ReturnType<typeof scanMessages>) => {
          if (following === undefined) expect(resultMarks).toBeUndefined()
          const mark = resultMarks?.find((candidate) => candidate.id === following)
          if (following !== undefined && rest.followingEdit) expect(mark).toMatchObject(rest.followingEdit)
          return rest
        }
        expect(scanned(scanMessages(fresh, start, next, following))).toEqual(expected)
        // Twice: the second walk reads the facts kept by the first.
        expect(scanned(scanMessages(shared, start, next, following))).toEqual(expected)
        expect(scanned(scanMessages(shared, start, next, following))).toEqual(expected)
      }),
    )
  })
})
