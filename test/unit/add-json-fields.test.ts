import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { addJsonFields, fieldsAddedOnly } from '../../src/util/add-json-fields.ts'

describe('addJsonFields', () => {
  it('adds fields after the opening brace and keeps every other byte as written', () => {
    const original = Buffer.from('  {"seed": 9007199254740993, "x": 1e400}\n')
    const out = addJsonFields(original, { prompt_cache_key: 'abc' })
    expect(out.toString()).toBe('  {"prompt_cache_key":"abc","seed": 9007199254740993, "x": 1e400}\n')
  })

  it('writes no comma into an empty object', () => {
    expect(addJsonFields(Buffer.from('{ \n}'), { a: 1, b: { c: true } }).toString()).toBe('{"a":1,"b":{"c":true} \n}')
  })

  it('parses to the original object plus the fields, whatever the object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), (object, key) => {
        const fields = { [`added ${key}`]: key }
        if (Object.hasOwn(object, `added ${key}`)) return
        const out = addJsonFields(Buffer.from(JSON.stringify(object, null, 1)), fields)
        expect(JSON.parse(out.toString())).toEqual({ ...object, ...fields })
      }),
    )
  })
})

describe('fieldsAddedOnly', () => {
  const list = [1, 2]
  it('names the fields a body gained when it kept every other value', () => {
    expect(fieldsAddedOnly({ a: list }, { a: list, key: 'k' })).toEqual({ key: 'k' })
  })
  it('is undefined when a field changed or went away', () => {
    expect(fieldsAddedOnly({ a: list }, { a: [1, 2], key: 'k' })).toBeUndefined()
    expect(fieldsAddedOnly({ a: list, b: 1 }, { a: list })).toBeUndefined()
  })
})
