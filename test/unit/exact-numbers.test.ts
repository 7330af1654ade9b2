import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { exactAsDouble, parseKeepingNumbers } from '../../src/util/exact-numbers.ts'

describe('exactAsDouble', () => {
  it.each(['0', '-0', '1', '1.0', '-0.0', '0.1', '1e3', '1.5E-7', '9007199254740992', '1234567890123456', '1e308'])(
    '%s survives a double',
    (literal) => expect(exactAsDouble(literal)).toBe(true),
  )
  it.each(['9007199254740993', '1e400', '-1e400', '1e-400', '0.12345678901234567890', '123456789012345678901234'])(
    '%s does not',
    (literal) => expect(exactAsDouble(literal)).toBe(false),
  )
})

describe('parseKeepingNumbers', () => {
  it('parses like JSON.parse and restores only what a double would change', () => {
    const text = '{"a":9007199254740993,"b":[1e400,2,"9007199254740993"],"c":{"d":-1e-400},"e":1.5}'
    const parsed = parseKeepingNumbers(Buffer.from(text))
    expect((parsed.value as { b: unknown[] }).b[1]).toBe(2)
    expect(parsed.restore(JSON.stringify(parsed.value))).toBe(text)
  })

  it('leaves strings alone, escaped quotes included', () => {
    const text = '{"s":"say \\"x\\": 9007199254740993e5","n":1e999}'
    const parsed = parseKeepingNumbers(Buffer.from(text))
    expect((parsed.value as { s: string }).s).toBe('say "x": 9007199254740993e5')
    expect(parsed.restore(JSON.stringify(parsed.value))).toBe(text)
  })

  it('round-trips any JSON whose numbers are written in any form', () => {
    const anyLiteral = fc.oneof(
      fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
      fc.tuple(fc.integer({ min: -9, max: 9 }), fc.integer({ min: -999, max: 999 })).map(([m, e]) => `${m}e${e}`),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
    )
    const json: fc.Arbitrary<string> = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        anyLiteral,
        fc.string().map((text) => JSON.stringify(text)),
        fc.array(tie('value') as fc.Arbitrary<string>, { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
        fc
          .uniqueArray(fc.tuple(fc.string(), tie('value') as fc.Arbitrary<string>), {
            maxLength: 4,
            selector: ([key]) => key,
          })
          .map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`),
      ),
    })).value
    fc.assert(
      fc.property(json, (text) => {
        const parsed = parseKeepingNumbers(Buffer.from(text))
        const restored = parsed.restore(JSON.stringify(parsed.value))
        expect(JSON.stringify(JSON.parse(restored))).toBe(JSON.stringify(JSON.parse(text)))
        for (const literal of text.match(/-?\d[\d.]*[eE]?[+-]?\d*/g) ?? [])
          if (!exactAsDouble(literal) && !text.includes(`"${literal}`)) expect(restored).toContain(literal)
      }),
    )
  })
})
