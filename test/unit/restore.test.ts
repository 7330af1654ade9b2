import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import type { ConversationMemory } from '../../src/rewrite/pipeline.ts'
import { crowdedAbove } from '../../src/rewrite/crowded.ts'
import { planRewrite } from '../../src/rewrite/plan.ts'
import { wantedBack } from '../../src/rewrite/restore.ts'
import { noDecisions, type ChatView, type FrozenDecisions, type RewriteOutcome } from '../../src/rewrite/types.ts'
import { runRewritten, testDropNoteFraming, testPolicy, viewWithCalls, type NamedCall } from '../helpers/chat-view.ts'

type Call = NamedCall

const fileA = ['export function loadSettings(path: string) {', '  return parseYamlFile(path)', '}'].join('\n')
const fileB = ['export function saveSettings(path: string) {', '  return writeYamlFile(path, settings)', '}'].join('\n')
const sharedImport = "import { describe, expect, it } from 'vitest'"

const read = (id: string, path: string, text: string): Call => [id, 'Read', { file_path: path }, text]
const edit = (id: string, path: string, oldString = 'x'): Call => [
  id,
  'Edit',
  { file_path: path, old_string: oldString, new_string: 'y' },
  'The file was updated.',
]
const bash = (id: string, command: string): Call => [id, 'Bash', { command }, 'ok\n']

function plan(
  view: ChatView,
  decisions: FrozenDecisions,
  budget: number,
  request = 2,
  restoreBelowBudgetFrom?: number,
): RewriteOutcome {
  return planRewrite({
    ...(restoreBelowBudgetFrom !== undefined ? { restoreBelowBudgetFrom } : {}),
    view,
    decisions,
    budget,
    policy: { ...testPolicy, keepRecentRounds: 1 },
    factor: 1,
    estimator: new TokenEstimator(),
    dropNoteFraming: testDropNoteFraming,
    request,
  })
}

const rewritten = (outcome: RewriteOutcome): Extract<RewriteOutcome, { kind: 'rewritten' }> => {
  if (outcome.kind !== 'rewritten') throw new Error(outcome.message)
  return outcome
}

const editedIds = (outcome: RewriteOutcome): string[] =>
  rewritten(outcome).edits.flatMap((item) => (item.kind === 'replace-tool-result' ? [item.id] : []))

const cleared = (...ids: string[]): FrozenDecisions => ({
  results: Object.fromEntries(ids.map((id) => [id, { hash: `${id}:1000`, action: 'clear' as const, at: 1 }])),
})

describe('what the newest message shows the agent needs again', () => {
  it('an edit of a file needs its read, absolute or relative, and no other file’s', () => {
    const view = viewWithCalls([
      read('a', '/srv/app/src/a.ts', fileA),
      read('b', '/srv/app/src/b.ts', fileB),
      edit('e', 'src/a.ts'),
    ])
    expect([...wantedBack(view.messages)]).toEqual(['a'])
  })

  it('a read that a later whole read of the same file superseded is not needed; the newer one is', () => {
    const view = viewWithCalls([read('a1', 'src/a.ts', fileA), read('a2', 'src/a.ts', fileA), edit('e', 'src/a.ts')])
    expect([...wantedBack(view.messages)]).toEqual(['a2'])
  })

  it('a patch needs the reads of the files it names', () => {
    const patch = '*** Begin Patch\n*** Update File: src/b.ts\n@@\n-x\n+y\n*** End Patch'
    const view = viewWithCalls([
      read('a', 'src/a.ts', fileA),
      ['s', 'shell', { command: ['bash', '-lc', 'cat src/b.ts'] }, fileB],
      ['p', 'apply_patch', { input: patch }, 'Done.'],
    ])
    expect([...wantedBack(view.messages)]).toEqual(['s'])
  })

  it('a quoted line needs the one result holding it; a line several results hold says nothing', () => {
    const design = `${sharedImport}\nconst phaseOrder = ['planning', 'design', 'implementation']\n`
    const other = `${sharedImport}\nconst unrelatedThing = computeSomethingElse()\n`
    const quoting: Call = [
      'w',
      'Write',
      {
        file_path: 'src/phases.ts',
        content: `${sharedImport}\nconst phaseOrder = ['planning', 'design', 'implementation']`,
      },
      'Written.',
    ]
    const view = viewWithCalls([read('d', 'docs/design.md', design), read('o', 'src/other.ts', other), quoting])
    expect([...wantedBack(view.messages)]).toEqual(['d'])
    const sharedOnly: Call = ['w2', 'Write', { file_path: 'src/x.ts', content: sharedImport }, 'Written.']
    expect([
      ...wantedBack(viewWithCalls([read('d', 'd.md', design), read('o', 'o.ts', other), sharedOnly]).messages),
    ]).toEqual([])
  })

  it('a one-line input (a path, a command) quotes no code, however long', () => {
    // A line with no distinctive string in it (restore.ts's strong use needs three).
    const design = `const phases = ['plan', 'design', 'build']\n`
    const oneLine: Call = [
      'r',
      'Bash',
      { command: "grep -n \"const phaseOrder = ['planning', 'design', 'implementation']\" src" },
      'ok',
    ]
    expect(wantedBack(viewWithCalls([read('d', 'docs/design.md', design), oneLine]).messages).size).toBe(0)
  })

  it('commands, searches and reads ask for nothing back', () => {
    const view = viewWithCalls([read('a', 'src/a.ts', fileA), bash('t', 'npm test'), read('b', 'src/b.ts', fileB)])
    expect(wantedBack(view.messages).size).toBe(0)
  })
})

describe('restore on use in the planner', () => {
  const calls = [
    read('a', 'src/a.ts', fileA),
    read('b', 'src/b.ts', fileB),
    bash('t1', 'npm test'),
    bash('t2', 'npm run lint'),
    edit('e', 'src/a.ts'),
  ]

  it('sends a cleared read whole again when the agent edits its file, as a new edit recorded as restored', () => {
    const outcome = rewritten(plan(viewWithCalls(calls), cleared('a', 'b'), 20_000, 7))
    expect(editedIds(outcome)).toEqual(['b'])
    expect(outcome.report.restored).toBe(1)
    expect(outcome.report.newBatch).toBe(true)
    // The cache prefix breaks where the restored result sits (message 2: the first round's results).
    expect(outcome.report.firstNewEdit).toBe(2)
    expect(outcome.decisions.results).not.toHaveProperty('a')
    expect(outcome.decisions.restored).toEqual({ a: { hash: 'a:1000', at: 7 } })
  })

  it('keeps a restored result whole on later requests with no new edit, and the record with it', () => {
    const first = rewritten(plan(viewWithCalls(calls), cleared('a', 'b'), 20_000, 7))
    const later = viewWithCalls([...calls, bash('t3', 'npm run build')])
    const next = rewritten(plan(later, first.decisions, 20_000, 8))
    expect(editedIds(next)).toEqual(['b'])
    expect(next.report.newBatch).toBe(false)
    expect(next.report.restored).toBeUndefined()
    expect(next.decisions.restored).toEqual({ a: { hash: 'a:1000', at: 7 } })
  })

  it('makes room for it by clearing other results first when that fits the budget', () => {
    // With a whole the request is 245 tokens over: the lint output is cleared in its place. That
    // leaves it crowded, so the cut goes on to the low-water mark as a forced cut would, and takes
    // the newest test run too (point A keeps it whole only in a batch below budget).
    const outcome = rewritten(plan(viewWithCalls(calls), cleared('a', 'b'), 4_000))
    expect(outcome.report.restored).toBe(1)
    expect(editedIds(outcome)).toEqual(expect.arrayContaining(['t2', 't1']))
    expect(editedIds(outcome)).not.toContain('a')
  })

  it('when nothing else makes room, plans as if nothing were asked back: no edit is spent on the attempt', () => {
    const view = viewWithCalls(calls)
    const tight = 2_000
    const outcome = rewritten(plan(view, cleared('a', 'b'), tight))
    expect(outcome.report.restored).toBeUndefined()
    expect(editedIds(outcome)).toContain('a')
    expect(outcome.decisions.restored).toBeUndefined()
    // The same plan as a request whose newest message asked for nothing.
    const quiet = viewWithCalls([...calls.slice(0, 4), bash('e', 'ls')])
    expect(editedIds(outcome)).toEqual(editedIds(plan(quiet, cleared('a', 'b'), tight)))
  })

  it('a restore that would leave the request crowded is made with the cut that takes it out, as a forced cut would be', () => {
    const reads = [read('a', 'src/a.ts', fileA), read('c', 'src/c.ts', fileB), read('d', 'src/d.ts', fileB)]
    const view = viewWithCalls([...reads, edit('e', 'src/a.ts')])
    const whole = rewritten(plan(view, cleared('a'), 20_000)).report.estimatedAfter
    // With a whole the request is at 90% of this budget: under it, past the crowded line (80% at low water 0.6).
    const budget = Math.ceil(whole / 0.9)
    const outcome = rewritten(plan(view, cleared('a'), budget))
    expect(outcome.report.restored).toBe(1)
    expect(editedIds(outcome)).not.toContain('a')
    // The reads after it go in the restore's own rewrite (no rider takes a read), down to the low-water mark.
    expect(editedIds(outcome)).toEqual(expect.arrayContaining(['c', 'd']))
    expect(outcome.report.estimatedAfter).toBeLessThanOrEqual(crowdedAbove({ budget, policy: testPolicy, factor: 1 }))
  })

  it('a restore that leaves the request crowded whatever else is cleared is not made: the read stays as frozen', () => {
    const view = viewWithCalls([read('a', 'src/a.ts', fileA), edit('e', 'src/a.ts')])
    const whole = rewritten(plan(view, cleared('a'), 20_000)).report.estimatedAfter
    const budget = Math.ceil(whole / 0.9)
    const outcome = rewritten(plan(view, cleared('a'), budget))
    expect(outcome.report.restored).toBeUndefined()
    expect(outcome.decisions.restored).toBeUndefined()
    expect(editedIds(outcome)).toEqual(['a'])
    expect(outcome.report.newBatch).toBe(false)
  })

  it('restores that leave the request crowded together are given up one at a time: one that fits below the line alone is made', () => {
    const patch =
      '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Update File: src/b.ts\n@@\n-x\n+y\n*** End Patch'
    const view = viewWithCalls([
      read('a', 'src/a.ts', fileA),
      read('b', 'src/b.ts', fileB),
      ['p', 'apply_patch', { input: patch }, 'Done.'],
    ])
    const both = rewritten(plan(view, cleared('a', 'b'), 20_000))
    expect(both.report.restored).toBe(2)
    // Both whole: at 93% of this budget, past the crowded line; one whole: about 64%, below it.
    const budget = Math.ceil(both.report.estimatedAfter / 0.93)
    const outcome = rewritten(plan(view, cleared('a', 'b'), budget))
    expect(outcome.report.restored).toBe(1)
    expect(editedIds(outcome)).toHaveLength(1)
    expect(outcome.report.estimatedAfter).toBeLessThanOrEqual(crowdedAbove({ budget, policy: testPolicy, factor: 1 }))
  })

  it('a forced cut clears what the newest message uses after everything else', () => {
    const view = viewWithCalls(calls)
    const outcome = rewritten(plan(view, noDecisions, 4_300))
    expect(editedIds(outcome)).not.toContain('a')
    expect(editedIds(outcome)).toContain('b')
  })

  it('clears, in the restore’s own rewrite, the later results a below-budget batch could take', () => {
    const outputs = [1, 2, 3, 4, 5, 6].map((n) => bash(`t${n}`, `npm run build -- part ${n}`))
    const view = viewWithCalls([read('a', 'src/a.ts', fileA), ...outputs, edit('e', 'src/a.ts')])
    const outcome = rewritten(plan(view, cleared('a'), 9_000))
    expect(outcome.report.restored).toBe(1)
    // t6 and the edit's result are the newest quarter of the budget: they stay whole.
    expect(editedIds(outcome).toSorted()).toEqual(['t1', 't2', 't3', 't4', 't5'])
    expect(outcome.report.firstNewEdit).toBe(2)
  })

  it('below budget a quoted line alone brings nothing back; when a cut is forced it does', () => {
    // A line with no distinctive string in it (restore.ts's strong use needs three).
    const design = `const phases = ['plan', 'design', 'build']\n`
    const quoting: Call = [
      'w',
      'Write',
      {
        file_path: 'src/phases.ts',
        content: "const phases = ['plan', 'design', 'build']\nexport default phases",
      },
      'Written.',
    ]
    const view = viewWithCalls([read('d', 'docs/design.md', design), ...calls.slice(1, 4), quoting])
    expect(wantedBack(view.messages, false).size).toBe(0)
    expect([...wantedBack(view.messages)]).toEqual(['d'])
    expect(rewritten(plan(view, cleared('d', 'b'), 20_000, 2, 0)).report.restored).toBeUndefined()
    // The client's request is over this budget: the quoted line's one holder comes back.
    expect(rewritten(plan(view, cleared('d', 'b'), 4_000, 2, 0)).report.restored).toBe(1)
  })

  it('below budget restores only as far back as the pipeline allows; over budget, as far as needed', () => {
    const view = viewWithCalls(calls)
    // a's result sits in message 2.
    expect(
      rewritten(plan(view, cleared('a', 'b'), 20_000, 2, Number.POSITIVE_INFINITY)).report.restored,
    ).toBeUndefined()
    expect(rewritten(plan(view, cleared('a', 'b'), 20_000, 2, 3)).report.restored).toBeUndefined()
    expect(rewritten(plan(view, cleared('a', 'b'), 20_000, 2, 2)).report.restored).toBe(1)
    // The client's request is over this budget: the reach does not apply.
    expect(rewritten(plan(view, cleared('a', 'b'), 4_000, 2, Number.POSITIVE_INFINITY)).report.restored).toBe(1)
  })
})

describe('restore on use in the pipeline, below budget', () => {
  const big = [
    read('a', 'src/a.ts', fileA),
    read('b', 'src/b.ts', fileB),
    bash('t1', 'npm test'),
    bash('t2', 'npm run lint'),
    edit('e', 'src/a.ts'),
  ]
  const limits = { window: 200_000, budget: 100_000 }
  const clearedOf = (tokens: number, ...ids: string[]): FrozenDecisions => ({
    results: Object.fromEntries(ids.map((id) => [id, { hash: `${id}:${tokens}`, action: 'clear' as const, at: 1 }])),
  })
  const memory = (lastSeen: number): ConversationMemory => ({
    decisions: clearedOf(8_000, 'a', 'b'),
    requests: 5,
    lastSeen,
  })

  it('with the cache warm, leaves a result more than 20k tokens from the end cleared: restoring it would write all that again', () => {
    const outcome = runRewritten(viewWithCalls(big, 8_000), memory(0), { limits, now: 1_000 })
    expect(outcome.report.restored).toBeUndefined()
    expect(outcome.edits.map((item) => (item.kind === 'replace-tool-result' ? item.id : ''))).toContain('a')
  })

  it('with the cache cold, restores it: everything is written again anyway', () => {
    const outcome = runRewritten(viewWithCalls(big, 8_000), memory(0), { limits, now: 10 * 60_000 })
    expect(outcome.report.restored).toBe(1)
  })

  it('with the cache warm, restores a result within 20k tokens of the end', () => {
    const near = [
      read('b', 'src/b.ts', fileB),
      bash('t1', 'npm test'),
      read('a', 'src/a.ts', fileA),
      bash('t2', 'ls'),
      edit('e', 'src/a.ts'),
    ]
    const outcome = runRewritten(
      viewWithCalls(near, 3_000),
      { ...memory(0), decisions: clearedOf(3_000, 'a', 'b') },
      { limits, now: 1_000 },
    )
    expect(outcome.report.restored).toBe(1)
    // A new edit the economy did not decide, below budget: counted as a restore, not as the hard limit.
    expect(outcome.batch?.reason).toBe('restore')
    expect(outcome.report.newBatch).toBe(true)
  })

  it('reads up to the restored result, not to a kept marker after it whose entry the restore left unmatched', () => {
    const near = [
      read('b', 'src/b.ts', fileB),
      bash('t1', 'npm test'),
      read('a', 'src/a.ts', fileA),
      bash('t2', 'ls'),
      edit('e', 'src/a.ts'),
    ]
    const kept = { ...memory(0), decisions: clearedOf(3_000, 'a', 'b'), nextEditResult: 't2' }
    const outcome = runRewritten(viewWithCalls(near, 3_000), kept, { limits, now: 1_000 })
    expect(outcome.report.restored).toBe(1)
    // The marker goes just ahead of a, whose lookback finds the entry the previous request read up to.
    expect(outcome.nextEditResult).toBe('a')
    // The promise for the next request is unchanged by it.
    expect(outcome.next.nextEditResult).not.toBe('a')
  })
})
