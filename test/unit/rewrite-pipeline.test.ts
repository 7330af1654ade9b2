import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { systemNote } from '../../src/rewrite/notes.ts'
import { runPipeline, type ConversationMemory, type PipelineOutcome } from '../../src/rewrite/pipeline.ts'
import {
  runRewritten,
  testDropNoteFraming,
  testPolicy,
  viewOf,
  viewRound,
  viewTokens,
  type ViewStep,
} from '../helpers/chat-view.ts'

const estimator = new TokenEstimator()
const note = { text: systemNote, tokens: 90 }

const run = runRewritten

/** What the session would store after this outcome, with the tail the adapter reported. */
const remembered = (outcome: Extract<PipelineOutcome, { kind: 'rewritten' }>, tail = 0): ConversationMemory => ({
  ...outcome.next,
  previousTail: tail,
})

const rounds = (count: number, tokens: number, from = 0): ViewStep[] =>
  Array.from({ length: count }, (_, index) => viewRound(tokens, `r${from + index}`))

describe('runPipeline', () => {
  it('plans against the configured budget, lowered by a limit the upstream named (less the reply)', () => {
    const view = viewOf(rounds(2, 100), { maxOutputTokens: 1_000 })
    expect(run(view, undefined).report.budget).toBe(10_000)
    const learned = run(view, undefined, { limits: { window: 20_000, budget: 10_000, learnedLimit: 8_000 } })
    expect(learned.report.budget).toBe(Math.floor(8_000 * 0.97 - 1_000))
  })

  it('counts the note’s room before it is on, so turning it on never breaks the budget', () => {
    // 100 head + 20 task + 9 × 1,022 = 9,318 tokens: under 10,000 alone, over it with a 700-token note.
    const view = viewOf(rounds(9, 1_000))
    expect(viewTokens(view)).toBe(9_318)
    expect(run(view, undefined).report).toMatchObject({ estimatedBefore: 9_318 + 90, newBatch: false })
    const roomy = run(view, undefined, { note: { text: systemNote, tokens: 700 } })
    expect(roomy.report).toMatchObject({ estimatedBefore: 9_318 + 700, newBatch: true })
    expect(roomy.report.estimatedAfter).toBeLessThanOrEqual(6_000)
  })

  it('turns the note on with the first edit and keeps it on; never when the note is off', () => {
    const small = viewOf(rounds(3, 1_000))
    const first = run(small, undefined)
    expect(first.noteOn).toBe(false)
    const big = viewOf(rounds(12, 1_000))
    const edited = run(big, remembered(first))
    expect(edited).toMatchObject({ noteOn: true, next: { noteOn: true } })
    const grown = viewOf([...rounds(12, 1_000), viewRound(10, 'r12')])
    expect(run(grown, remembered(edited)).noteOn).toBe(true)
    expect(run(big, undefined, { note: undefined }).noteOn).toBe(false)
  })

  it('gives no prefix-break verdict on a first request, nor when the next one extends it', () => {
    const first = run(viewOf(rounds(3, 100)), undefined)
    expect(first.prefixBreak).toBeUndefined()
    expect(first.next).toMatchObject({ messageCount: 7 })
    expect(run(viewOf(rounds(4, 100)), remembered(first)).prefixBreak).toBeUndefined()
  })

  it('calls a new batch inside what was sent before a ctxgate break', () => {
    const first = run(viewOf(rounds(9, 1_000)), undefined)
    const second = run(viewOf(rounds(10, 1_000)), remembered(first))
    expect(second.report.newBatch).toBe(true)
    expect(second.prefixBreak).toBe('ctxgate_batch')
  })

  it('calls a shorter or different history a client edit', () => {
    const first = run(viewOf(rounds(4, 100)), undefined)
    expect(run(viewOf(rounds(3, 100)), remembered(first)).prefixBreak).toBe('client_edit')
    const changed = viewOf([...rounds(2, 100), viewRound(120, 'r2'), ...rounds(2, 100, 3)])
    expect(run(changed, remembered(first)).prefixBreak).toBe('client_edit')
  })

  it('calls a frozen result the client changed a client edit, not a ctxgate batch', () => {
    const first = run(viewOf(rounds(12, 1_000)), undefined)
    const changed = viewOf([viewRound(990, 'r0'), ...rounds(12, 1_000, 1)])
    const second = run(changed, remembered(first))
    expect(second.report.clientEdited).toBe(true)
    expect(second.prefixBreak).toBe('client_edit')
  })

  it('keeps the previous tail for a cache breakpoint, except after a new cut', () => {
    const first = run(viewOf(rounds(3, 20)), undefined)
    expect(run(viewOf(rounds(4, 20)), remembered(first, 6)).previousTail).toBe(6)
    const long = viewOf(rounds(400, 20))
    const cut = run(long, remembered(first, 6))
    expect(cut.report.droppedMessages).toBeGreaterThan(0)
    expect(cut.previousTail).toBeUndefined()
  })

  it('says whether the request as sent would not have fit the window', () => {
    const view = viewOf(rounds(12, 1_000), { maxOutputTokens: 8_000 })
    expect(run(view, undefined).refusalAvoided).toBe(true)
    expect(run(viewOf(rounds(3, 1_000)), undefined).refusalAvoided).toBe(false)
  })

  it('gives a too-long verdict, with the report, when even one round cannot fit', () => {
    const outcome = runPipeline({
      view: viewOf([viewRound(12_000, 'huge')]),
      memory: undefined,
      limits: { window: 20_000, budget: 10_000 },
      policy: testPolicy,
      factor: 1,
      estimator,
      note,
      dropNoteFraming: testDropNoteFraming,
    })
    expect(outcome.kind).toBe('too-long')
    expect(outcome.report).toMatchObject({ budget: 10_000, estimatedBefore: 12_000 + 100 + 20 + 15 + 7 + 90 })
  })
})
