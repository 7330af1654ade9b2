import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { firstDifference } from '../../src/util/parse-carry.ts'
import { parseReusingElements } from '../../src/util/reuse-parsed-elements.ts'
import { stringScanInBytes } from '../helpers/string-json/in-bytes.ts'

/** Short and long texts, past ASCII too (a character is then two to four bytes, its offsets apart from the text's). */
const anyText = (constraints: { minLength?: number; maxLength: number }) =>
  fc.oneof(fc.string(constraints), fc.string({ ...constraints, unit: 'grapheme' }))
const longText = fc.oneof(anyText({ maxLength: 8 }), anyText({ minLength: 40, maxLength: 300 }))
const message = fc.oneof(
  fc.record({ role: fc.constantFrom('user', 'assistant'), content: longText }),
  fc.record({
    role: fc.constant('user'),
    content: fc.array(fc.record({ type: fc.constant('text'), text: longText }), { maxLength: 2 }),
  }),
  // Numbers whose ends a shorter or longer literal next to them would move.
  fc.integer({ min: 0, max: 10_000 }),
  fc.constantFrom(true, false, null, 'x'),
)

/** One step of a client's conversation: append, change the last few (markers move there), or change another field. */
const step = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), messages: fc.array(message, { minLength: 1, maxLength: 3 }) }),
  fc.record({
    kind: fc.constant('replace-last' as const),
    count: fc.nat(3),
    messages: fc.array(message, { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('field' as const), max: fc.integer({ min: 0, max: 100_000 }), stream: fc.boolean() }),
  fc.record({ kind: fc.constant('other-conversation' as const), messages: fc.array(message, { maxLength: 4 }) }),
  // The same body again (a retry): the whole text is shared.
  fc.record({ kind: fc.constant('same' as const) }),
)

describe('parsing that carries the shared prefix of a recent body', () => {
  it('gives what JSON.parse of the decoded body and the string scan it replaced give, for any sequence of bodies a client could send', () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 6 }),
        fc.array(step, { minLength: 1, maxLength: 10 }),
        fc.boolean(),
        (start, steps, toolsAfter) => {
          let messages = start
          let fields: Record<string, unknown> = { max_tokens: 64 }
          const bodyText = (list: unknown[]): string =>
            JSON.stringify(
              toolsAfter
                ? { model: 'm', ...fields, messages: list, tools: [{ name: 'read' }] }
                : { model: 'm', tools: [{ name: 'read' }], messages: list, ...fields },
            )
          for (const next of steps) {
            if (next.kind === 'append') messages = [...messages, ...next.messages]
            else if (next.kind === 'replace-last')
              messages = [...messages.slice(0, Math.max(0, messages.length - next.count)), ...next.messages]
            else if (next.kind === 'field') fields = { max_tokens: next.max, ...(next.stream ? { stream: true } : {}) }
            const text = bodyText(next.kind === 'other-conversation' ? next.messages : messages)
            const parsed = parseReusingElements(Buffer.from(text))
            expect(parsed).toBeDefined()
            expect(parsed?.value).toStrictEqual(JSON.parse(text))
            expect(Object.keys(parsed?.value ?? {})).toEqual(Object.keys(JSON.parse(text) as object))
            // Carried or scanned, the spans the splice reads are the string scan's, counted in bytes.
            expect(parsed?.members).toEqual(stringScanInBytes(text))
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('prevents one request from changing another: carried values are frozen or parsed again', () => {
    const short = { role: 'user', content: 'short' }
    const long = { role: 'user', content: 'a tool result re-sent '.repeat(20) }
    const one = parseReusingElements(Buffer.from(JSON.stringify({ model: 'm', messages: [short, long, short] })))
    const two = parseReusingElements(Buffer.from(JSON.stringify({ model: 'm', messages: [short, long, short, long] })))
    const [firstOne, longOne] = (one?.value['messages'] ?? []) as object[]
    const [firstTwo, longTwo] = (two?.value['messages'] ?? []) as object[]
    expect(longTwo).toBe(longOne)
    expect(Object.isFrozen(longTwo)).toBe(true)
    // A short element is not frozen by the parse: it is never handed to two requests.
    expect(firstTwo).not.toBe(firstOne)
    expect(firstTwo).toEqual(firstOne)
  })
})

describe('where two bodies first differ', () => {
  /** The definition: the first offset where the bytes differ, or the shorter length. */
  function firstDifferenceOneByOne(a: Buffer, b: Buffer): number {
    let index = 0
    while (index < a.length && index < b.length && a[index] === b[index]) index++
    return index
  }

  it('is the first offset where the bytes differ, or the shorter length', () => {
    const piece = fc.oneof(anyText({ maxLength: 4 }), anyText({ minLength: 60, maxLength: 400 }))
    fc.assert(
      fc.property(piece, piece, piece, fc.boolean(), (shared, a, b, same) => {
        const one = Buffer.from(shared + a)
        const two = Buffer.from(shared + (same ? a : b))
        expect(firstDifference(one, two)).toBe(firstDifferenceOneByOne(one, two))
        expect(firstDifference(two, one)).toBe(firstDifferenceOneByOne(one, two))
      }),
      { numRuns: 500 },
    )
  })

  it('finds one changed byte at any offset of a body (fast-check)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 65, maxLength: 700 }), (body) => {
        const bytes = Buffer.from(body)
        for (let at = 0; at < bytes.length; at++) {
          const changed = Buffer.from(bytes)
          changed[at] = (bytes[at] as number) ^ 0x01
          expect(firstDifference(changed, bytes)).toBe(at)
        }
      }),
      { numRuns: 100 },
    )
  })
})
