import { describe, expect, it } from 'vitest'
import { clearedInput, clearedInputNote, minClearedChars } from '../../src/rewrite/cleared-input.ts'
import type { ConversationMemory } from '../../src/rewrite/pipeline.ts'
import type { Json } from '../../src/util/json.ts'
import { code, estimator, formats, send } from '../helpers/input-formats.ts'

describe('clearedInput (pure)', () => {
  it('replaces only the long strings of an object input, keeping short fields, unknown fields and key order', () => {
    const input = {
      file_path: 'src/a.ts',
      old_string: code(1, 'old'),
      new_string: code(1, 'new'),
      replace_all: false,
      extra: { tag: 'x' },
    }
    const cleared = clearedInput('Edit', { form: 'object', value: input }) as Record<string, unknown>
    expect(Object.keys(cleared)).toEqual(Object.keys(input))
    expect(cleared).toMatchObject({ file_path: 'src/a.ts', replace_all: false, extra: { tag: 'x' } })
    expect(cleared['old_string']).toBe(clearedInputNote(input.old_string.length, 'src/a.ts'))
    expect(cleared['new_string']).toContain('read src/a.ts to see the file as it is now')
    expect(cleared['new_string']).toContain(`${input.new_string.length.toLocaleString('en-US')} characters`)
  })

  it('keeps JSON arguments valid JSON, and leaves arguments that do not parse as sent', () => {
    const args = JSON.stringify({ path: 'notes.md', content: code(2, 'text') })
    const cleared = clearedInput('write_file', { form: 'json', value: args })
    expect(typeof cleared).toBe('string')
    expect(JSON.parse(cleared as string)).toEqual({
      path: 'notes.md',
      content: clearedInputNote(code(2, 'text').length, 'notes.md'),
    })
    expect(
      clearedInput('write_file', { form: 'json', value: `{"content": "${'x'.repeat(minClearedChars)}` }),
    ).toBeUndefined()
  })

  it('keeps every other byte of JSON arguments: numbers past 2^53, spacing, escapes, keys', () => {
    const long = code(4, 'text')
    const args = `{ "path": "a\\"b.md",  "id": 12345678901234567890, "content": ${JSON.stringify(long)}, "n": 1.0 }`
    const cleared = clearedInput('write_file', { form: 'json', value: args })
    expect(cleared).toBe(
      `{ "path": "a\\"b.md",  "id": 12345678901234567890, "content": ${JSON.stringify(clearedInputNote(long.length, 'a"b.md'))}, "n": 1.0 }`,
    )
  })

  it('turns a long free-text input (a patch) into a note naming the patched file, and leaves short inputs alone', () => {
    const patch = `*** Begin Patch\n*** Update File: src/b.ts\n@@\n${code(3, 'p')}\n*** End Patch`
    expect(clearedInput('apply_patch', { form: 'text', value: patch })).toBe(clearedInputNote(patch.length, 'src/b.ts'))
    expect(clearedInput('apply_patch', { form: 'text', value: 'short' })).toBeUndefined()
    expect(clearedInput('Bash', { form: 'object', value: { command: 'npm test' } })).toBeUndefined()
  })
})

describe.each(formats)('old tool inputs cleared when fitting, %s', (_, format) => {
  const budgetFor = (body: Json): number => {
    const view = format.adapter.view(body, estimator)
    return Math.floor((view.headTokens + view.messages.reduce((sum, m) => sum + m.tokens, 0)) * 0.7)
  }

  it('clears the long strings of calls older than the kept rounds, and nothing else, when over budget', () => {
    const body = format.body(10)
    const { outcome, sent } = send(format, body, undefined, budgetFor(body))
    expect(outcome.report.droppedMessages).toBe(0)
    expect(outcome.report.newClearedInputs).toBeGreaterThan(0)
    const before = format.inputs(body)
    const after = format.inputs(sent)
    expect([...after.keys()]).toEqual([...before.keys()])
    // The newest three rounds are kept whole.
    for (const id of ['c7', 'c8', 'c9']) expect(after.get(id)).toEqual(before.get(id))
    expect(after.get('c0')).not.toEqual(before.get('c0'))
    expect(JSON.stringify(after.get('c0'))).toContain('[ctxgate: ')
    expect(outcome.report.estimatedAfter).toBeLessThanOrEqual(outcome.report.budget)
  })

  it('drops whole messages instead with the switch off', () => {
    const body = format.body(10)
    const { outcome, sent } = send(format, body, undefined, budgetFor(body), false)
    expect(outcome.report.clearedInputs ?? 0).toBe(0)
    expect(JSON.stringify(sent)).not.toContain('of this old tool input cleared')
  })

  it('sends a cleared input identically on every later request, below budget too', () => {
    const body = format.body(10)
    const first = send(format, body, undefined, budgetFor(body))
    const cleared = format.inputs(first.sent).get('c0')
    const memory: ConversationMemory = { ...first.outcome.next, requests: 1 }
    const grown = format.body(11)
    const second = send(format, grown, memory, 10_000_000)
    expect(second.outcome.report).toMatchObject({ newBatch: false, newClearedInputs: 0 })
    expect(format.inputs(second.sent).get('c0')).toEqual(cleared)
    expect(second.outcome.next.decisions.inputs).toEqual(first.outcome.next.decisions.inputs)
  })
})
