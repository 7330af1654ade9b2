import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  clearOrder,
  clearRisks,
  hazardOf,
  refetchChance,
  refetchChanceOver,
  type ToolCall,
} from '../../src/rewrite/clear-order.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { planRewrite } from '../../src/rewrite/plan.ts'
import { noDecisions, type ChatView, type MessageView } from '../../src/rewrite/types.ts'
import { testDropNoteFraming, testPolicy, viewOf, viewRound } from '../helpers/chat-view.ts'

const read = (id: string, path: string, extra: Record<string, unknown> = {}): ToolCall => ({
  id,
  name: 'Read',
  input: { file_path: path, ...extra },
})
const bash = (id: string, command: string): ToolCall => ({ id, name: 'Bash', input: { command } })
const edit = (id: string, path: string): ToolCall => ({
  id,
  name: 'Edit',
  input: { file_path: path, old_string: 'a', new_string: 'b' },
})

describe('the superseded-read rule', () => {
  it('a read is superseded by a later whole read of the same file, or by a rewrite of it', () => {
    const risks = clearRisks([
      read('a1', 'src/a.ts'),
      read('b1', 'src/b.ts'),
      read('a2', './src/a.ts'),
      { id: 'w', name: 'Write', input: { file_path: 'src/b.ts', content: 'new' } },
    ])
    expect(risks.get('a1')).toBe('superseded')
    expect(risks.get('b1')).toBe('superseded')
    // The newest read of a file supersedes nothing after it.
    expect(risks.get('a2')).toBe('read')
  })

  it('a later partial read does not supersede a whole one, but the same partial read again does', () => {
    const risks = clearRisks([
      read('whole', 'lib/x.py'),
      read('part', 'lib/x.py', { offset: 10, limit: 20 }),
      read('part2', 'lib/x.py', { offset: 10, limit: 20 }),
    ])
    expect(risks.get('whole')).toBe('read')
    expect(risks.get('part')).toBe('superseded')
  })

  it('an edit after a read does not supersede it: the agent is still editing that file', () => {
    const risks = clearRisks([read('r', 'src/a.ts'), edit('e', 'src/a.ts'), read('other', 'src/c.ts')])
    expect(risks.get('r')).toBe('editing')
    expect(risks.get('other')).toBe('read')
    expect(risks.get('e')).toBe('output')
  })

  it('a command run again supersedes its earlier output; a shell cat is a read of its file', () => {
    const risks = clearRisks([
      bash('t1', 'npm test'),
      bash('c1', 'cat src/a.py'),
      bash('t2', 'npm test'),
      bash('c2', 'nl -ba src/a.py'),
    ])
    expect(risks.get('t1')).toBe('superseded')
    expect(risks.get('t2')).toBe('test')
    expect(risks.get('c1')).toBe('superseded')
    expect(risks.get('c2')).toBe('read')
  })

  it('the newest run of each test is its own class; an earlier run of the same tests, however printed, is output', () => {
    const risks = clearRisks([
      bash('a1', 'npx jest tests/a.test.ts 2>&1 | tail -80'),
      bash('b1', 'npx jest tests/b.test.ts'),
      bash('a2', 'NODE_OPTIONS=--experimental-vm-modules npx jest tests/a.test.ts --verbose 2>&1 | tail -200'),
      bash('suite', 'npm run test:unit'),
      bash('other', 'python reproduce.py'),
    ])
    expect(risks.get('a1')).toBe('output')
    expect(risks.get('a2')).toBe('test')
    expect(risks.get('b1')).toBe('test')
    expect(risks.get('suite')).toBe('test')
    expect(risks.get('other')).toBe('output')
  })

  it('a shell read of some lines (sed -n, head, tail) supersedes no other read; the same range again does', () => {
    const risks = clearRisks([
      bash('whole', 'cat src/a.py'),
      { id: 's1', name: 'bash', input: JSON.stringify({ command: "sed -n '1,40p' src/a.py" }) },
      bash('h1', 'head -n 20 src/a.py'),
      { id: 's2', name: 'shell', input: { command: ['bash', '-lc', "sed -n '120,180p' src/a.py"] } },
      { id: 's3', name: 'shell', input: { command: ['bash', '-lc', "sed -n '150,200p' src/a.py"] } },
      { id: 's4', name: 'shell', input: { command: ['bash', '-lc', "sed -n '150,200p' src/a.py"] } },
    ])
    expect(risks.get('whole')).toBe('read')
    expect(risks.get('s1')).toBe('read')
    expect(risks.get('h1')).toBe('read')
    expect(risks.get('s2')).toBe('read')
    expect(risks.get('s3')).toBe('superseded')
    expect(risks.get('s4')).toBe('read')
  })
})

describe('the clearing order', () => {
  // Rounds r0..r5: a read of a.ts, a test run, a read of b.ts, an edit of a.ts, the test again, a read of a.ts.
  const calls: [string, string, unknown][] = [
    ['r0', 'Read', { file_path: 'a.ts', limit: 50 }],
    ['r1', 'Bash', { command: 'npm test' }],
    ['r2', 'Read', { file_path: 'b.ts' }],
    ['r3', 'Read', { file_path: 'c.ts' }],
    ['r4', 'Edit', { file_path: 'c.ts', old_string: 'x', new_string: 'y' }],
    ['r5', 'Bash', { command: 'npm test' }],
    ['r6', 'Read', { file_path: 'a.ts' }],
  ]
  const base = viewOf(calls.map(([id]) => viewRound(1_000, id)))
  const view: ChatView = {
    ...base,
    messages: base.messages.map((message): MessageView => {
      const call = calls.find(([id]) => message.toolCallIds[0] === id)
      return call ? { ...message, toolCallNames: [call[1]], toolCallInputs: [call[2]] } : message
    }),
  }

  it('takes superseded results first, then command output, then reads, reads of files being edited last', () => {
    const results = view.messages.flatMap((message) => message.toolResults)
    expect(clearOrder(results, view.messages).map((result) => result.id)).toEqual([
      'r0',
      'r1',
      'r4',
      'r5',
      'r2',
      'r6',
      'r3',
    ])
  })

  it('over budget, the planner clears in that order, not oldest first', () => {
    const outcome = planRewrite({
      view,
      decisions: noDecisions,
      budget: 6_000,
      policy: { ...testPolicy, clearBatch: 1, keepRecentRounds: 1 },
      dropNoteFraming: testDropNoteFraming,
      factor: 1,
      estimator: new TokenEstimator(),
    })
    if (outcome.kind !== 'rewritten') throw new Error('expected a rewrite')
    const cleared = outcome.edits.flatMap((item) => (item.kind === 'replace-tool-result' ? [item.id] : []))
    // Four cleared reach the low-water mark: the reads of b.ts (r2), a.ts (r6) and c.ts, being edited (r3), stay.
    expect(cleared.toSorted()).toEqual(['r0', 'r1', 'r4', 'r5'])
  })

  it('prices a re-fetch by how often each class is needed again', () => {
    expect(hazardOf('superseded', 15)).toBeLessThan(hazardOf('read', 15))
    expect(hazardOf('read', 15)).toBeLessThan(hazardOf('editing', 15))
    expect(refetchChance(0.1, 0)).toBe(0)
    expect(refetchChance(0.1, 10)).toBeCloseTo(1 - 0.9 ** 10)
    // Over a horizon the result ages: its hazard falls band by band, below the young rate held constant.
    expect(refetchChanceOver('read', 0, 0)).toBe(0)
    expect(refetchChanceOver('read', 0, 5)).toBeCloseTo(1 - (1 - hazardOf('read', 1)) ** 5, 10)
    expect(refetchChanceOver('read', 5, 100)).toBeLessThan(refetchChance(hazardOf('read', 5), 100))
    expect(refetchChanceOver('read', 5, 100)).toBeGreaterThan(refetchChanceOver('read', 30, 100))
    // The same as stepping request by request through the age bands, for any class, age and horizon.
    fc.assert(
      fc.property(
        fc.constantFrom('superseded', 'output', 'test', 'read', 'editing' as const),
        fc.nat(60),
        fc.nat(250),
        (risk, age, requests) => {
          let kept = 1
          for (let step = 1; step <= requests; step++) kept *= 1 - hazardOf(risk, age + step)
          expect(refetchChanceOver(risk, age, requests)).toBeCloseTo(1 - kept, 12)
        },
      ),
    )
  })
})
