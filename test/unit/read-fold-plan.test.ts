import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { readFold } from '../../src/rewrite/notes.ts'
import type { PlanInput } from '../../src/rewrite/plan.ts'
import type { ChatView, FrozenDecisions, RewriteOutcome } from '../../src/rewrite/types.ts'
import { planView, rewrittenOf, testPolicy, viewWithCalls, type NamedCall } from '../helpers/chat-view.ts'

const estimator = new TokenEstimator()
const policy = { ...testPolicy, strategy: 'batched-fold' as const }

type Call = NamedCall
const viewOfCalls = (calls: readonly Call[]): ChatView => viewWithCalls(calls)

const prose = (at: number): string => `This paragraph explains the reasons behind decision ${at} in some detail.`
const design = [
  '# Design',
  ...Array.from({ length: 40 }, (_, at) => prose(at)),
  '```typescript',
  'const scenarioContext = this.buildOptionalContext(',
  '```',
  ...Array.from({ length: 40 }, (_, at) => prose(at + 40)),
].join('\n')

const designRead: Call = ['d', 'Read', { file_path: 'docs/design.md' }, design, 8_000]
const shell = (id: string): Call => [id, 'Bash', { command: `echo ${id}` }, `ran ${id}\n`.repeat(100), 300]

const plan = (view: ChatView, budget: number, overrides: Partial<PlanInput> = {}): RewriteOutcome =>
  planView(view, budget, { policy, ...overrides })
const rewritten = rewrittenOf

const editOf = (outcome: RewriteOutcome, id: string) =>
  rewritten(outcome).edits.find((edit) => edit.kind === 'replace-tool-result' && edit.id === id)

describe('a read the cut would clear is folded to its quotable lines', () => {
  const view = viewOfCalls([designRead, shell('a'), shell('b')])

  it('folds a young read of a document to its headings and code, naming the file, instead of clearing it', () => {
    const outcome = plan(view, 7_000)
    expect(editOf(outcome, 'd')).toEqual({
      kind: 'replace-tool-result',
      id: 'd',
      action: 'fold-read',
      text: readFold(design, 'docs/design.md'),
    })
    const text = (editOf(outcome, 'd') as { text: string }).text
    expect(text).toContain('const scenarioContext = this.buildOptionalContext(')
    expect(text).not.toContain(prose(3))
    expect(rewritten(outcome).decisions.results['d']).toMatchObject({ action: 'fold-read' })
    expect(rewritten(outcome).report).toMatchObject({ folded: 1, newFolded: 1, cleared: 0 })
    expect(rewritten(outcome).report.estimatedAfter).toBeLessThanOrEqual(7_000)
  })

  it('stays frozen: the next request sends the same bytes, as no new edit', () => {
    const first = rewritten(plan(view, 7_000))
    const grown = viewOfCalls([designRead, shell('a'), shell('b'), shell('c')])
    const next = rewritten(plan(grown, 7_000, { decisions: first.decisions }))
    expect(editOf(next, 'd')).toEqual(editOf(first, 'd'))
    expect(next.report).toMatchObject({ folded: 1, newFolded: 0, newBatch: false })
  })

  it('clears it when turned off, and under clear-only', () => {
    for (const overrides of [{ policy: { ...policy, foldReads: false } }, { policy: testPolicy }])
      expect(editOf(plan(view, 7_000, overrides), 'd')).toMatchObject({
        action: 'clear',
        text: '[ctxgate: output cleared; read docs/design.md again to see it]',
      })
  })

  it('clears a frozen fold whose call is no longer a read, rather than guess its text', () => {
    const decisions: FrozenDecisions = { results: { d: { hash: 'd:8000', action: 'fold-read' } } }
    const changed = viewOfCalls([['d', 'Grep', { pattern: 'x' }, design, 8_000], shell('a'), shell('b')])
    expect(editOf(plan(changed, 20_000, { decisions }), 'd')).toMatchObject({ action: 'clear' })
  })

  it('clears the fold when the request is still over budget with it, rather than drop turns or refuse', () => {
    const source = Array.from({ length: 400 }, (_, at) => `const value${at} = compute(${at}, "step ${at}")`).join('\n')
    const foldTokens = estimator.text(readFold(source, 'src/steps.ts'))
    const big: Call = ['s', 'Read', { file_path: 'src/steps.ts' }, source, Math.ceil(foldTokens * 1.3)]
    const outcome = rewritten(plan(viewOfCalls([big, shell('a'), shell('b')]), foldTokens + 300))
    expect(editOf(outcome, 's')).toMatchObject({ action: 'clear' })
    expect(outcome.report.droppedMessages).toBe(0)
  })
})
