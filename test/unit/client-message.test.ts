import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { readClientMessage } from '../../src/websocket/client-message.ts'
import { parseKeepingNumbers } from '../../src/util/exact-numbers.ts'
import { reuseMaxBytes } from '../../src/util/reuse-parsed-elements.ts'

/** What the socket read before it scanned messages: the whole message parsed, each input item written out again. */
function wholeParse(text: string): { fields: Record<string, unknown>; items: string[] | undefined } | undefined {
  let value: unknown
  try {
    value = parseKeepingNumbers(Buffer.from(text)).value
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const fields = { ...(value as Record<string, unknown>) }
  const input = fields['input']
  if ('input' in fields) fields['input'] = null
  if (fields['type'] !== 'response.create') return { fields, items: undefined }
  const list =
    typeof input === 'string'
      ? [{ type: 'message', role: 'user', content: input }]
      : input === undefined
        ? []
        : Array.isArray(input)
          ? input
          : undefined
  return { fields, items: list?.map((item) => JSON.stringify(item) ?? 'null') }
}

/** Scanned, whatever its length (only messages the parse memo leaves out are scanned otherwise). */
function read(text: string): { fields: Record<string, unknown>; items: string[] | undefined } | undefined {
  const message = readClientMessage(Buffer.from(text), 0)
  return message && { fields: message.fields, items: message.input?.items.map((item) => item.toString('utf8')) }
}

describe('reading a client message without parsing it whole', () => {
  it('prevents a changed history: fields and input items are what parsing the whole message gave, however it is written', () => {
    const message = fc.record(
      {
        type: fc.constantFrom('response.create', 'response.cancel', 'session.update'),
        model: fc.oneof(fc.string(), fc.jsonValue()),
        previous_response_id: fc.option(fc.string(), { nil: undefined }),
        store: fc.option(fc.boolean(), { nil: undefined }),
        input: fc.option(fc.oneof(fc.array(fc.jsonValue(), { maxLength: 6 }), fc.string(), fc.jsonValue()), {
          nil: undefined,
        }),
        tools: fc.option(fc.array(fc.jsonValue(), { maxLength: 3 }), { nil: undefined }),
      },
      { requiredKeys: ['type'] },
    )
    fc.assert(
      fc.property(message, fc.constantFrom(undefined, 1, 2, '\t'), (value, indent) => {
        const text = JSON.stringify(value, null, indent)
        expect(read(text)).toEqual(wholeParse(text))
      }),
      { numRuns: 300 },
    )
  })

  it('keeps the last of a repeated key in the first one’s place, as JSON.parse does', () => {
    const text = '{"input":"first","type":"response.create","input":[{"a":1}],"model":"m","model":"n"}'
    expect(read(text)).toEqual(wholeParse(text))
    expect(Object.keys(read(text)?.fields ?? {})).toEqual(['input', 'type', 'model'])
    expect(read(text)?.items).toEqual(['{"a":1}'])
  })

  it('writes items as JSON.stringify does: escapes decoded, whitespace dropped', () => {
    const text = '{ "type" : "response.create" , "input" : [ { "content" : "h\\u00e9llo \\/ \\"q\\"" , "n" : 1.50 } ] }'
    expect(read(text)?.items).toEqual(['{"content":"héllo / \\"q\\"","n":1.5}'])
  })

  it('keeps literals a double cannot hold, as the whole parse did, to be put back in a resend', () => {
    const text = '{"type":"response.create","metadata":{"big":9007199254740993},"input":[{"n":1e400}]}'
    const message = readClientMessage(Buffer.from(text), 0)
    expect(message?.restore).toBeDefined()
    const items = message?.input?.items.map((item) => message.restore?.(item.toString()))
    expect(items).toEqual(['{"n":1e400}'])
    expect(message?.restore?.(JSON.stringify(message.fields['metadata']))).toBe('{"big":9007199254740993}')
  })

  it('reads an own __proto__ key as a plain field, not a prototype', () => {
    const text = '{"type":"response.create","__proto__":{"polluted":true},"input":[]}'
    const fields = read(text)?.fields ?? {}
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect(read(text)).toEqual(wholeParse(text))
  })

  it('prevents reading a broken message: anything malformed, even one input item, is not a message', () => {
    for (const text of [
      '{"type":"response.create", broken',
      '{"type":"response.create","input":[{"a":1},{"b":tru}]}',
      '{"type":"response.create","input":[{"a":1}{"b":2}]}',
      '{"type":"response.create","input":[1,]}',
      '{"type":"response.create"} trailing',
      '["response.create"]',
      '"response.create"',
      '',
    ]) {
      expect(readClientMessage(Buffer.from(text), 0)).toBeUndefined()
      expect(readClientMessage(Buffer.from(text))).toBeUndefined()
      expect(wholeParse(text)).toBeUndefined()
    }
  })

  it('scans a message longer than the parse memo takes, with the same result as parsing it whole', () => {
    const input = Array.from({ length: 450 }, (_, index) => ({
      type: 'function_call_output',
      output: `${index}`.padEnd(20_000, 'x'),
    }))
    const text = JSON.stringify({ type: 'response.create', model: 'gpt-5', input })
    expect(text.length).toBeGreaterThan(reuseMaxBytes)
    const message = readClientMessage(Buffer.from(text))
    expect(message?.input?.items.map((item) => item.toString())).toEqual(wholeParse(text)?.items)
  })

  it('does not read the input of a message that is not a response.create', () => {
    expect(read('{"type":"response.cancel","input":[{"a":1}]}')).toEqual({
      fields: { type: 'response.cancel', input: null },
      items: undefined,
    })
  })
})
