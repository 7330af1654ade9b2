import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { inUse, inUseSince, maxHolders } from '../../src/rewrite/in-use.ts'
import { planRewrite } from '../../src/rewrite/plan.ts'
import { forcedOrder, inUseRank } from '../../src/rewrite/quoted.ts'
import { stronglyUsed, strongUse, wantedBack } from '../../src/rewrite/restore.ts'
import { noDecisions, type FrozenDecisions } from '../../src/rewrite/types.ts'
import { testDropNoteFraming, testPolicy, viewWithCalls, type NamedCall } from '../helpers/chat-view.ts'

const design = [
  '# Design',
  'Each phase builds a scenarioContext and a testingContext from its inputs.',
  'The documentationContext is optional; the reportSummary names every output.',
].join('\n')
const notes = 'Meeting notes: nothing decided about the release_schedule yet.\n'
const read = (id: string, path: string, text: string): NamedCall => [id, 'Read', { file_path: path }, text]
const edit = (id: string, path: string, newString: string): NamedCall => [
  id,
  'Edit',
  { file_path: path, old_string: 'x', new_string: newString },
  'The file was updated.',
]
const run = (id: string, command: string, output = 'ok\n'): NamedCall => [id, 'Bash', { command }, output]

describe('results in use: distinctive strings the newest tool inputs quote', () => {
  it('marks the result holding an identifier a recent Edit quotes, and not the others', () => {
    const view = viewWithCalls([
      read('d', 'docs/design.md', design),
      read('n', 'docs/notes.md', notes),
      edit('e1', 'src/phase.ts', 'const context = scenarioContext'),
    ])
    const since = inUseSince(view.messages)
    expect([...since.keys()]).toEqual(['d'])
    expect(view.messages[since.get('d') as number]?.toolCallIds).toEqual(['e1'])
  })

  it('matches whole strings only: an identifier inside a longer one is not a quote of it', () => {
    const view = viewWithCalls([
      read('d', 'docs/design.md', 'we call make_scenario_context_table here\n'),
      edit('e1', 'src/phase.ts', 'scenario_context = 1'),
    ])
    expect(inUseSince(view.messages).size).toBe(0)
  })

  it('finds a path quoted relative in a result that names it absolute', () => {
    const view = viewWithCalls([
      run('g', 'grep -rl phase', '/repo/src/phases/report.ts\n'),
      run('c', 'cat src/phases/report.ts'),
    ])
    expect(inUseSince(view.messages).has('g')).toBe(true)
  })

  it('ignores a string more than maxHolders results hold, and quotes made before the result existed', () => {
    const shared = 'import { sharedHelper } from "./util"\n'
    const calls: NamedCall[] = Array.from({ length: maxHolders + 1 }, (_, index) =>
      read(`r${index}`, `src/f${index}.ts`, shared),
    )
    const view = viewWithCalls([
      edit('e0', 'src/x.ts', 'testingContext()'),
      read('d', 'docs/design.md', design),
      ...calls,
      edit('e1', 'src/y.ts', 'sharedHelper()'),
    ])
    expect(inUseSince(view.messages).size).toBe(0)
  })

  it('looks only at the newest few calling messages', () => {
    const view = viewWithCalls([
      read('d', 'docs/design.md', design),
      edit('e1', 'src/phase.ts', 'scenarioContext'),
      ...Array.from({ length: 4 }, (_, index) => run(`t${index}`, `npm test -- ${index}`)),
    ])
    expect(inUseSince(view.messages).has('d')).toBe(false)
  })

  it('counts the strings of the newest message that one result alone holds; three or more make it strongly used', () => {
    const view = viewWithCalls([
      read('d', 'docs/design.md', design),
      read('copy', 'docs/copy.md', 'scenarioContext is described in the design\n'),
      edit('e1', 'src/phase.ts', 'scenarioContext + testingContext + documentationContext + reportSummary'),
    ])
    // scenarioContext has two holders: it says nothing of which one the agent read.
    expect(inUse(view.messages).byNewest.get('d')).toBe(3)
    expect(inUse(view.messages).byNewest.has('copy')).toBe(false)
    expect(strongUse).toBe(3)
    expect([...stronglyUsed(view.messages)]).toEqual(['d'])
    // Asked back over budget only: below budget a restore far back did not pay (restore.ts).
    expect(wantedBack(view.messages).has('d')).toBe(true)
    expect(wantedBack(view.messages, false).has('d')).toBe(false)
  })

  it('ranks a result in use after every clearing class when edits are forced', () => {
    const view = viewWithCalls([
      read('d', 'docs/design.md', design),
      read('n', 'docs/notes.md', notes),
      run('t', 'npm test'),
      edit('e1', 'src/phase.ts', 'scenarioContext'),
    ])
    const { rankOf, inOrder } = forcedOrder(view.messages)
    expect(rankOf({ id: 'd' })).toBe(inUseRank)
    expect(rankOf({ id: 'n' })).toBeLessThan(inUseRank)
    expect(inOrder([{ id: 'd' }, { id: 'n' }, { id: 't' }]).at(-1)).toEqual({ id: 'd' })
  })
})

describe('the planner with results in use', () => {
  const calls: NamedCall[] = [
    read('d', 'docs/design.md', design),
    read('n', 'docs/notes.md', notes),
    run('t1', 'npm test'),
    run('t2', 'npm run lint'),
    edit('e1', 'src/phase.ts', 'scenarioContext + testingContext + documentationContext'),
  ]
  const plan = (budget: number, decisions: FrozenDecisions = noDecisions, restoreBelowBudgetFrom?: number) => {
    const outcome = planRewrite({
      view: viewWithCalls(calls, 1_000),
      decisions,
      budget,
      policy: { ...testPolicy, clearBatch: 1, keepRecentRounds: 1, lowWater: 0.9, strategy: 'clear-only' },
      factor: 1,
      estimator: new TokenEstimator(),
      dropNoteFraming: testDropNoteFraming,
      ...(restoreBelowBudgetFrom !== undefined ? { restoreBelowBudgetFrom } : {}),
    })
    if (outcome.kind !== 'rewritten') throw new Error('expected a rewrite')
    return outcome
  }
  const cleared = (outcome: ReturnType<typeof plan>): string[] =>
    outcome.edits.flatMap((item) => (item.kind === 'replace-tool-result' ? [item.id] : []))

  it('over budget, clears the read nobody quotes and keeps the one the newest edit quotes', () => {
    const outcome = plan(3_000)
    expect(cleared(outcome)).toContain('n')
    expect(cleared(outcome)).not.toContain('d')
  })

  const frozenD: FrozenDecisions = { results: { d: { hash: 'd:1000', action: 'clear', at: 1 } } }

  it('over budget, restores a cleared result the newest message quotes strongly, clearing others in its place', () => {
    const outcome = plan(4_600, frozenD)
    expect(cleared(outcome)).not.toContain('d')
    // The lint output makes the room; the newest run of the tests, young, is kept whole (point A).
    expect(cleared(outcome)).toContain('t2')
    expect(cleared(outcome)).not.toContain('t1')
    expect(outcome.report.restored).toBe(1)
    expect(outcome.decisions.restored?.['d']).toBeDefined()
  })

  it('below budget, leaves it frozen outside the restore reach', () => {
    const outcome = plan(100_000, frozenD, 1_000)
    expect(cleared(outcome)).toContain('d')
    expect(outcome.report.restored).toBeUndefined()
  })

  it('over budget, leaves it frozen when the newest message quotes it only once', () => {
    const weak = calls.map((call): NamedCall =>
      call[0] === 'e1' ? edit('e1', 'src/phase.ts', 'scenarioContext') : call,
    )
    const outcome = planRewrite({
      view: viewWithCalls(weak, 1_000),
      decisions: frozenD,
      budget: 4_600,
      policy: { ...testPolicy, clearBatch: 1, keepRecentRounds: 1, lowWater: 0.9, strategy: 'clear-only' },
      factor: 1,
      estimator: new TokenEstimator(),
      dropNoteFraming: testDropNoteFraming,
    })
    if (outcome.kind !== 'rewritten') throw new Error('expected a rewrite')
    expect(outcome.edits.some((item) => item.kind === 'replace-tool-result' && item.id === 'd')).toBe(true)
    expect(outcome.report.restored).toBeUndefined()
  })
})
