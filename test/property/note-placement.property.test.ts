import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { systemNote } from '../../src/rewrite/notes.ts'
import type { Json } from '../helpers/conversations.ts'
import { createRewriter, reportOf, sentBody } from '../helpers/rewrite.ts'
import { stepsArbitrary, wireFixtures } from '../helpers/wire-formats.ts'

const openaiFixtures = wireFixtures.filter((fixture) => fixture.format !== 'anthropic-messages')

const isNote = (entry: Json): boolean => {
  const content = entry['content']
  return content === systemNote || (Array.isArray(content) && (content[0] as Json | undefined)?.['text'] === systemNote)
}
const isToolResult = (entry: Json): boolean => entry['role'] === 'tool' || entry['type'] === 'function_call_output'

/** What comes before the conversation: instructions, tools and the leading system or developer entries. */
function headOf(body: Json, entries: readonly Json[]): string {
  const lead = entries.findIndex((entry) => entry['role'] !== 'system' && entry['role'] !== 'developer')
  return JSON.stringify([body['instructions'], body['tools'], entries.slice(0, lead < 0 ? entries.length : lead)])
}

describe.each(openaiFixtures)('the system note in $format requests', (fixture) => {
  it('is there exactly when an edit is, once, right after the run of results the earliest edit is in', async () => {
    let placed = 0
    await fc.assert(
      fc.asyncProperty(
        stepsArbitrary(1, 24).map((steps) => fixture.conversation(steps)),
        fc.integer({ min: 3_000, max: 60_000 }),
        async (list, window) => {
          const original = fixture.body(list)
          const result = await createRewriter(fixture.format, window)(original)
          if (result.kind === 'reject') return
          const sent = sentBody(result)
          const report = reportOf(result)
          const edited = Number(report['folded']) + Number(report['cleared']) + Number(report['droppedMessages']) > 0
          // The head (instructions, leading system messages, tools) is never where the note goes.
          const entries = fixture.list(sent)
          const client = fixture.list(original)
          expect(headOf(sent, entries)).toBe(headOf(original, client))
          const notes = entries.flatMap((entry, index) => (isNote(entry) ? [index] : []))
          expect(notes).toHaveLength(edited ? 1 : 0)
          const at = notes[0]
          if (at === undefined) return
          placed++
          const firstChanged = entries.findIndex(
            (entry, index) => JSON.stringify(entry) !== JSON.stringify(client[index]),
          )
          // Everything before the earliest edit goes as the client sent it; only that edit's run of results precedes the note.
          expect(firstChanged).toBeGreaterThanOrEqual(0)
          expect(firstChanged).toBeLessThan(at)
          expect(entries.slice(firstChanged + 1, at).every(isToolResult)).toBe(true)
          const next = entries[at + 1]
          if (next) expect(isToolResult(next)).toBe(false)
          expect(entries[at - 1]?.['type']).not.toBe('reasoning')
        },
      ),
      // 40 runs placed 9–20 notes (24 runs measured); 80 keep the guard below from failing by chance.
      { numRuns: 80 },
    )
    // The generated conversations do reach the budget: the placement is checked, not skipped.
    expect(placed).toBeGreaterThan(5)
  })
})
