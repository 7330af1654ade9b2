import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { planRewrite } from '../../src/rewrite/plan.ts'
import { lastQuoted } from '../../src/rewrite/quoted.ts'
import { noDecisions } from '../../src/rewrite/types.ts'
import { testDropNoteFraming, testPolicy, viewWithCalls } from '../helpers/chat-view.ts'

const fileA = [
  '     1→export function loadSettings(path: string) {',
  '     2→  return parseYamlFile(path)',
  '     3→}',
].join('\n')
const fileB = [
  '     1→export function saveSettings(path: string) {',
  '     2→  return writeYamlFile(path, settings)',
  '     3→}',
].join('\n')

const read = (id: string, path: string, text: string): [string, string, unknown, string] => [
  id,
  'Read',
  { file_path: path },
  text,
]
const edit = (id: string, path: string, oldString: string): [string, string, unknown, string] => [
  id,
  'Edit',
  { file_path: path, old_string: oldString, new_string: 'x' },
  'The file was updated.',
]

describe('results the agent is working from', () => {
  it('marks a result when a later tool input quotes one of its lines, without its line number', () => {
    const view = viewWithCalls([
      read('a', 'src/a.ts', fileA),
      read('b', 'src/b.ts', fileB),
      edit('e1', 'src/a.ts', 'export function loadSettings(path: string) {\n  return parseYamlFile(path)'),
    ])
    const quoted = lastQuoted(view.messages)
    expect(quoted.has('a')).toBe(true)
    expect(quoted.has('b')).toBe(false)
    // The quote is in the message that calls e1.
    expect(view.messages[quoted.get('a') as number]?.toolCallIds).toEqual(['e1'])
  })

  it('ignores short lines and quotes made before the result existed', () => {
    const view = viewWithCalls([
      edit('e0', 'src/a.ts', 'export function loadSettings(path: string) {'),
      read('a', 'src/a.ts', fileA),
      edit('e1', 'src/b.ts', '}\n  return x'),
    ])
    expect(lastQuoted(view.messages).has('a')).toBe(false)
  })

  it('over budget, the planner clears a result nobody quoted before one the agent quoted, and the least recently quoted first', () => {
    const view = viewWithCalls(
      [
        read('a', 'src/a.ts', fileA),
        read('b', 'src/b.ts', fileB),
        read('c', 'src/c.ts', 'const unrelatedValue = computeSomethingElse()\n'),
        edit('e1', 'src/b.ts', '  return writeYamlFile(path, settings)'),
        edit('e2', 'src/a.ts', '  return parseYamlFile(path)'),
        ['t1', 'Bash', { command: 'npm test' }, 'ok\n'],
        ['t2', 'Bash', { command: 'npm run lint' }, 'ok\n'],
      ],
      1_000,
    )
    const plan = (budget: number): string[] => {
      const outcome = planRewrite({
        view,
        decisions: noDecisions,
        budget,
        policy: { ...testPolicy, clearBatch: 4, keepRecentRounds: 1 },
        factor: 1,
        estimator: new TokenEstimator(),
        dropNoteFraming: testDropNoteFraming,
      })
      if (outcome.kind !== 'rewritten') throw new Error('expected a rewrite')
      return outcome.edits.flatMap((item) => (item.kind === 'replace-tool-result' ? [item.id] : []))
    }
    // Enough room once the edits' results and c go: a and b (quoted since) stay whole.
    expect(plan(6_500)).not.toContain('a')
    expect(plan(6_500)).not.toContain('b')
    expect(plan(6_500)).toContain('c')
    // Tighter: b (quoted by e1) goes before a (quoted later, by e2).
    const tight = plan(5_000)
    expect(tight).toContain('b')
    expect(tight).not.toContain('a')
  })
})
