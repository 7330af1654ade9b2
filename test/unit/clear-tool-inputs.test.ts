import { describe, expect, it } from 'vitest'
import { clearedInput, clearedInputNote, minClearedChars } from '../../src/rewrite/cleared-input.ts'
import type { ConversationMemory } from '../../src/rewrite/pipeline.ts'
import type { Json } from '../../src/util/json.ts'
import { code, editInput, estimator, formats, send } from '../helpers/input-formats.ts'
import { supersededWrites, writtenFile } from '../../src/rewrite/superseded-input.ts'

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

describe('supersededWrites (pure)', () => {
  const edit = (id: string, path: string) => ({
    id,
    name: 'Edit',
    clearable: { form: 'object' as const, value: { file_path: path, old_string: 'a', new_string: 'b' } },
  })

  it('names the writes whose file a later call writes again, in any wire form, and never the newest write of a file', () => {
    const calls = [
      edit('e1', 'src/a.ts'),
      {
        id: 'w1',
        name: 'write_file',
        clearable: { form: 'json' as const, value: '{"path":"src/b.ts","content":"x"}' },
      },
      {
        id: 'p1',
        name: 'apply_patch',
        clearable: {
          form: 'text' as const,
          value: '*** Begin Patch\n*** Update File: src/c.ts\n@@\n-x\n+y\n*** End Patch',
        },
      },
      edit('e2', 'src/a.ts'),
      {
        id: 'w2',
        name: 'Write',
        clearable: { form: 'object' as const, value: { file_path: 'src/b.ts', content: 'y' } },
      },
      { id: 'p2', name: 'apply_patch', clearable: { form: 'text' as const, value: '*** Update File: src/c.ts\n+z' } },
      edit('e3', 'src/d.ts'),
    ]
    expect([...supersededWrites(calls)].toSorted()).toEqual(['e1', 'p1', 'w1'])
  })

  it('never supersedes a command, a read, or a write that names no file', () => {
    const heredoc = { form: 'object' as const, value: { command: 'cat > src/a.ts <<EOF\nx\nEOF' } }
    const calls = [
      { id: 'b1', name: 'Bash', clearable: heredoc },
      { id: 'b2', name: 'Bash', clearable: heredoc },
      { id: 'r1', name: 'Read', clearable: { form: 'object' as const, value: { file_path: 'src/a.ts' } } },
      { id: 'r2', name: 'Read', clearable: { form: 'object' as const, value: { file_path: 'src/a.ts' } } },
      { id: 'n1', name: 'Write', clearable: { form: 'object' as const, value: { content: 'no path' } } },
      { id: 'n2', name: 'Write', clearable: { form: 'object' as const, value: { content: 'no path' } } },
      { id: 'j1', name: 'write_file', clearable: { form: 'json' as const, value: '{"path": "src/a.ts", "content": ' } },
    ]
    expect(supersededWrites(calls).size).toBe(0)
    expect(writtenFile('Bash', heredoc)).toBeUndefined()
    expect(writtenFile('Read', { form: 'object', value: { file_path: 'src/a.ts' } })).toBeUndefined()
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

  it('under `superseded`, clears only the old writes of a file written again later', () => {
    // Every even round edits the same file; odd rounds (and Responses' patches) each write their own.
    const inputFor = (round: number): Record<string, unknown> =>
      round % 2 === 0 ? { ...editInput(round), file_path: 'src/same.ts' } : editInput(round)
    // A tool name ctxgate knows as a write (tool-kind.ts): `edit_file` is not one.
    const body = format.body(10, inputFor, 'write_file')
    const { outcome, sent } = send(format, body, undefined, budgetFor(body), 'superseded')
    expect(outcome.report.newClearedInputs).toBeGreaterThan(0)
    const before = format.inputs(body)
    const after = format.inputs(sent)
    expect(JSON.stringify(after.get('c0'))).toContain('[ctxgate: ')
    for (const [id, input] of after) {
      const round = Number(id.slice(1))
      // The newest edit of src/same.ts (c8) and every file written once go out as the client sent them.
      if (round % 2 === 1 || round >= 8) expect(input).toEqual(before.get(id))
    }
  })

  it('under `superseded`, clears no input when every file is written once', () => {
    const body = format.body(10, undefined, 'write_file')
    const { outcome, sent } = send(format, body, undefined, budgetFor(body), 'superseded')
    expect(outcome.report.newClearedInputs ?? 0).toBe(0)
    expect(JSON.stringify(sent)).not.toContain('of this old tool input cleared')
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
