import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ConversationMemory, PipelineOutcome } from '../../src/rewrite/pipeline.ts'
import type { ChatView, MessageView } from '../../src/rewrite/types.ts'
import { crowdedAbove } from '../../src/rewrite/crowded.ts'
import { runRewritten, testPolicy, viewOf, viewRound } from '../helpers/chat-view.ts'

/** One step of an agent that reads, edits and tests a few files: the calls restore on use reacts to. */
type Step =
  | { readonly kind: 'read'; readonly file: number; readonly tokens: number }
  | { readonly kind: 'edit'; readonly file: number }
  | { readonly kind: 'bash'; readonly tokens: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('read' as const),
    file: fc.integer({ min: 0, max: 3 }),
    tokens: fc.integer({ min: 300, max: 2_500 }),
  }),
  fc.record({ kind: fc.constant('edit' as const), file: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('bash' as const), tokens: fc.integer({ min: 50, max: 1_500 }) }),
)

const lineOf = (file: number): string => `export const valueOfFile${file} = computeTheValueFor(${file})`
const path = (file: number): string => `/repo/src/file-${file}.ts`

/** The view of the first `count` steps, each a round of one call, with names, inputs and result texts. */
function viewUpTo(steps: readonly Step[], count: number): ChatView {
  const shown = steps.slice(0, count)
  const base = viewOf(
    shown.map((entry, index) => {
      const tokens = entry.kind === 'edit' ? 40 : entry.tokens
      const text = entry.kind === 'read' ? `${lineOf(entry.file)}\n`.repeat(1) + 'x\n'.repeat(tokens / 2) : 'ok\n'
      return { ...viewRound(tokens, `c${index}`), text }
    }),
  )
  return {
    ...base,
    messages: base.messages.map((message): MessageView => {
      const index = Number(message.toolCallIds[0]?.slice(1))
      const entry = shown[index]
      if (!entry) return message
      if (entry.kind === 'read')
        return { ...message, toolCallNames: ['Read'], toolCallInputs: [{ file_path: path(entry.file) }] }
      if (entry.kind === 'bash')
        return { ...message, toolCallNames: ['Bash'], toolCallInputs: [{ command: `npm test ${index}` }] }
      const input = { file_path: path(entry.file), old_string: lineOf(entry.file), new_string: 'changed' }
      return { ...message, toolCallNames: ['Edit'], toolCallInputs: [input] }
    }),
  }
}

type Rewritten = Extract<PipelineOutcome, { kind: 'rewritten' }>
const editedIds = (outcome: Rewritten): Set<string> =>
  new Set(outcome.edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : [])))

describe('restore on use over generated read/edit/test sessions', () => {
  it('a result is frozen as cleared or as restored, never both; a restore is a counted new edit; a restored result stays whole until a new batch', () => {
    let restores = 0
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 4, maxLength: 30 }),
        fc.integer({ min: 3_000, max: 9_000 }),
        (steps, budget) => {
          let memory: ConversationMemory | undefined
          let previousEdited = new Set<string>()
          let previousRestored = new Set<string>()
          for (let count = 1; count <= steps.length; count++) {
            const outcome = runRewritten(viewUpTo(steps, count), memory, {
              limits: { window: 20_000, budget },
              economy: undefined,
            })
            const edited = editedIds(outcome)
            const restored = new Set(Object.keys(outcome.next.decisions.restored ?? {}))
            restores += outcome.report.restored ?? 0
            for (const id of restored) {
              expect(outcome.next.decisions.results).not.toHaveProperty(id)
              expect(edited.has(id)).toBe(false)
            }
            // Sent edited last time and whole now: only as a restore, which is a new edit (the prefix breaks there).
            const unfrozen = [...previousEdited].filter((id) => !edited.has(id))
            if (unfrozen.length > 0) {
              expect(outcome.report.restored ?? 0).toBeGreaterThan(0)
              expect(outcome.report.newBatch).toBe(true)
            }
            // Restored before and edited now: only by a new batch (a forced cut), which drops the record.
            for (const id of previousRestored)
              if (edited.has(id)) {
                expect(outcome.report.newBatch).toBe(true)
                expect(restored.has(id)).toBe(false)
              }
            previousEdited = edited
            previousRestored = restored
            memory = { ...outcome.next, previousTail: 0 }
          }
        },
      ),
      { numRuns: 60, seed: 23 },
    )
    // The generated sessions do restore: the checks above were exercised.
    expect(restores).toBeGreaterThan(0)
  })

  it('over budget, what the newest message edits is sent whole whenever clearing everything else makes room short of crowded', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 4, maxLength: 30 }), (steps) => {
        let memory: ConversationMemory | undefined
        for (let count = 1; count <= steps.length; count++) {
          const outcome = runRewritten(viewUpTo(steps, count), memory, {
            limits: { window: 20_000, budget: 6_000 },
            economy: undefined,
          })
          memory = { ...outcome.next, previousTail: 0 }
          const newest = steps[count - 1]
          if (newest?.kind !== 'edit' || outcome.report.droppedMessages > 0) continue
          // The newest whole read of the edited file, if nothing read or rewrote it later.
          const readIndex = steps
            .slice(0, count - 1)
            .findLastIndex((entry) => entry.kind === 'read' && entry.file === newest.file)
          if (readIndex < 0) continue
          // Room below the crowded line (crowded.ts): a restore past it would be cut again within a few requests.
          const line = crowdedAbove({ budget: outcome.report.budget, policy: testPolicy, factor: 1 })
          const room = line - outcome.report.estimatedAfter
          const size = (steps[readIndex] as { tokens: number }).tokens
          // A read cleared while the request had room for it whole is what restore on use prevents.
          if (editedIds(outcome).has(`c${readIndex}`)) expect(room).toBeLessThan(size)
        }
      }),
      { numRuns: 60 },
    )
  })
})
