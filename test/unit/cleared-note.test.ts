import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { clearedNote, clearedNoteFor } from '../../src/rewrite/notes.ts'
import { planRewrite } from '../../src/rewrite/plan.ts'
import { noDecisions, type ChatView, type MessageView } from '../../src/rewrite/types.ts'
import { testDropNoteFraming, testPolicy, viewOf, viewRound } from '../helpers/chat-view.ts'

describe('the cleared note names how to get the result back', () => {
  it('names the file of a read and the command of a shell call, and is the same every time', () => {
    expect(clearedNoteFor({ name: 'Read', input: { file_path: 'src/app.ts' } })).toBe(
      '[ctxgate: output cleared; read src/app.ts again to see it]',
    )
    expect(clearedNoteFor({ name: 'bash', input: '{"command":"npm test -- --run"}' })).toBe(
      '[ctxgate: output cleared; run `npm test -- --run` again to see it]',
    )
    expect(clearedNoteFor({ name: 'Bash', input: { command: 'cat lib/x.py' } })).toContain('read lib/x.py again')
    expect(clearedNoteFor({ name: 'Read', input: { file_path: 'a.ts' } })).toBe(
      clearedNoteFor({ name: 'Read', input: { file_path: 'a.ts' } }),
    )
  })

  it('stays short: one line of a long or multi-line command, cut to 120 characters', () => {
    const note = clearedNoteFor({ name: 'Bash', input: { command: `python - <<'EOF'\n${'x = 1\n'.repeat(50)}EOF` } })
    expect(note).toBe("[ctxgate: output cleared; run `python - <<'EOF' ...` again to see it]")
    const long = clearedNoteFor({ name: 'Bash', input: { command: 'echo '.repeat(100) } })
    expect(long.length).toBeLessThan(180)
  })

  it('falls back to the generic note for other tools and unknown calls', () => {
    expect(clearedNoteFor(undefined)).toBe(clearedNote)
    expect(clearedNoteFor({ name: 'run', input: { step: 1 } })).toBe(clearedNote)
  })

  it('is what the planner writes, and what it counts', () => {
    const base = viewOf(Array.from({ length: 8 }, (_, index) => viewRound(1_000, `r${index}`)))
    const view: ChatView = {
      ...base,
      messages: base.messages.map((message): MessageView =>
        message.toolCallIds.length > 0
          ? { ...message, toolCallNames: ['Read'], toolCallInputs: [{ file_path: `src/${message.toolCallIds[0]}.ts` }] }
          : message,
      ),
    }
    const estimator = new TokenEstimator()
    const outcome = planRewrite({
      view,
      decisions: noDecisions,
      budget: 6_000,
      policy: testPolicy,
      factor: 1,
      estimator,
      dropNoteFraming: testDropNoteFraming,
    })
    if (outcome.kind !== 'rewritten') throw new Error('expected a rewrite')
    const first = outcome.edits.find((edit) => edit.kind === 'replace-tool-result' && edit.id === 'r0')
    expect(first).toMatchObject({ text: '[ctxgate: output cleared; read src/r0.ts again to see it]' })
    const cleared = outcome.edits.filter((edit) => edit.kind === 'replace-tool-result').length
    const noteTokens = estimator.text('[ctxgate: output cleared; read src/r0.ts again to see it]')
    expect(outcome.report.tokensRemoved.clear).toBe(cleared * (1_000 - noteTokens))
  })
})
