import fc from 'fast-check'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { parseKeepingNumbers } from '../../src/util/exact-numbers.ts'
import { parseReusingElements, reuseMemoChars } from '../../src/util/reuse-parsed-elements.ts'

const parseText = (text: string) => parseReusingElements(Buffer.from(text))

const longText = fc.string({ minLength: 130, maxLength: 400 })
const message = fc.record({
  role: fc.constantFrom('user', 'assistant'),
  content: fc.oneof(longText, fc.array(fc.record({ type: fc.constant('text'), text: longText }), { maxLength: 3 })),
})
const body = fc.record({
  model: fc.string(),
  max_tokens: fc.integer(),
  messages: fc.array(message, { maxLength: 6 }),
  tools: fc.array(fc.jsonValue(), { maxLength: 3 }),
})

describe('parsing that reuses re-sent history', () => {
  it('gives what JSON.parse gives, key order and whitespace included, for any object body', () => {
    fc.assert(
      fc.property(body, fc.constantFrom(undefined, 2), (value, indent) => {
        const text = JSON.stringify(value, null, indent)
        const parsed = parseText(text)
        // A body with a literal a double cannot hold is declined, so the caller keeps its digits.
        if (parsed === undefined) return
        expect(parsed.value).toStrictEqual(JSON.parse(text))
        expect(Object.keys(parsed.value)).toEqual(Object.keys(JSON.parse(text) as object))
      }),
    )
  })

  it('prevents one request from changing another: a re-sent message comes back as the same frozen value', () => {
    const first = { role: 'user', content: 'a re-sent tool result '.repeat(20) }
    const one = parseText(JSON.stringify({ model: 'm', messages: [first] }))
    const two = parseText(JSON.stringify({ model: 'other', messages: [first, { role: 'user', content: 'x' }] }))
    const sharedOne = (one?.value['messages'] as unknown[] | undefined)?.[0]
    expect(sharedOne).toBeDefined()
    expect((two?.value['messages'] as unknown[] | undefined)?.[0]).toBe(sharedOne)
    expect(Object.isFrozen(sharedOne)).toBe(true)
    expect(() => {
      ;(sharedOne as Record<string, unknown>)['content'] = 'changed'
    }).toThrow(TypeError)
  })

  it('prevents losing digits: a literal a double cannot hold is declined, and parseKeepingNumbers keeps it', () => {
    const text = `{"model":"m","messages":[{"role":"user","content":"${'y'.repeat(200)}","n":9007199254740993}]}`
    expect(parseText(text)).toBeUndefined()
    const kept = parseKeepingNumbers(Buffer.from(text))
    expect(kept.restore(JSON.stringify(kept.value))).toContain('9007199254740993')
    expect(parseText('{"a":1e400}')).toBeUndefined()
  })

  it('prevents accepting bad JSON: what JSON.parse refuses still throws or is declined', () => {
    for (const bad of [
      '{"a":1,}',
      '{"a":[1,]}',
      '{"a" 1}',
      '{"a":"x"',
      `{"m":[${JSON.stringify('z'.repeat(300))},]}`,
      '{"a":tru}',
    ])
      expect(() => {
        if (parseText(bad) === undefined) JSON.parse(bad)
      }).toThrow(SyntaxError)
    expect(parseText('{"__proto__":{"polluted":1}}')).toBeUndefined()
    expect(parseText('[1,2]')).toBeUndefined()
  })

  it('prevents thrashing the memo: a body larger than half of it is left to the plain parse', () => {
    expect(parseText(JSON.stringify({ model: 'm', filler: 'f'.repeat(9 * 1024 * 1024) }))).toBeUndefined()
  })
})

/** A full collection, so retained memory can be read (the flag set at run time, as vitest's workers start without it). */
function collect(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

describe('the parse memo', () => {
  it('prevents holding whole bodies: what it keeps does not pin the bodies it was cut from', () => {
    collect()
    const before = process.memoryUsage().heapUsed
    for (let round = 0; round < 40; round++) {
      const kept = { role: 'user', content: `body ${round} `.padEnd(600, 'm') }
      // 2.5 MB of text (too long for the memo) around one short message that the memo keeps.
      parseText(JSON.stringify({ model: 'm', messages: [kept], filler: `${round}`.padEnd(2_500_000, 'f') }))
    }
    collect()
    expect(reuseMemoChars()).toBeLessThan(16 * 1024 * 1024)
    // Pinned, the 40 bodies would hold 100 MB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20_000_000)
  })

  it('prevents re-parsing what is re-sent: an entry found again outlives older ones when the memo is full', () => {
    // 1.9 MB members, ten more than the 16 MB memo holds; whatever other tests left in it is older still.
    const member = (round: number): string =>
      JSON.stringify({ model: 'm', blob: { text: `${round} re-sent? `.padEnd(1_900_000, 'b') } })
    const blob = (round: number): unknown => parseText(member(round))?.value['blob']
    const first = blob(0)
    expect(blob(0)).toBe(first)
    const second = blob(1)
    for (let round = 2; round < 12; round++) {
      blob(round)
      expect(blob(0)).toBe(first)
    }
    expect(reuseMemoChars()).toBeLessThanOrEqual(16 * 1024 * 1024)
    expect(blob(1)).not.toBe(second)
  })
})
