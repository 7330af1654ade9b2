import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { quotableLines, readFoldShare } from '../../src/rewrite/fold-lines.ts'
import { readFold, readFoldOf } from '../../src/rewrite/notes.ts'
import { readFoldFor, readPathOf } from '../../src/rewrite/read-fold.ts'
import type { ToolResultView } from '../../src/rewrite/types.ts'

/** As Claude Code's Read prints a file: the line number, an arrow, the line. */
const numbered = (lines: readonly string[]): string[] =>
  lines.map((line, at) => `${String(at + 1).padStart(6)}→${line}`)

const prose = Array.from(
  { length: 30 },
  (_, at) => `This paragraph explains the reasons behind decision number ${at} at some length.`,
)

const designDoc = numbered([
  '# Design: optional context',
  ...prose.slice(0, 10),
  '## The new helper',
  '```typescript',
  'const scenarioContext = this.buildOptionalContext(',
  "  'test_scenario',",
  ');',
  '```',
  ...prose.slice(10, 20),
  '| phase | file | fallback |',
  'Replace `requireReference()` with the helper.',
  ...prose.slice(20),
])

describe('a read folded to the lines the agent quotes', () => {
  it('keeps a document’s code blocks, headings, tables and inline code, numbered as read, and leaves out its prose', () => {
    const kept = quotableLines(designDoc, 'docs/design.md')
    expect(kept).toEqual(designDoc.filter((line) => !prose.some((paragraph) => line.endsWith(paragraph))))
    expect(kept).toContain('    14→const scenarioContext = this.buildOptionalContext(')
  })

  it('keeps source code’s declarations and code lines, never blank lines or comments', () => {
    const source = numbered([
      '// Builds the prompt for one phase.',
      "import { readFileSync } from 'node:fs'",
      '',
      'export function buildPrompt(phase: string): string {',
      '  # not a comment in TypeScript, but a comment-looking line is dropped',
      "  return readFileSync(phase, 'utf8')",
      '}',
      ...prose.slice(0, 12).map((line) => ` * ${line}`),
    ])
    expect(quotableLines(source, 'src/phases/report.ts')).toEqual([
      "     2→import { readFileSync } from 'node:fs'",
      '     4→export function buildPrompt(phase: string): string {',
      "     6→  return readFileSync(phase, 'utf8')",
      '     7→}',
    ])
  })

  it('under the cap, declarations and code blocks go in before lesser lines, earlier lines first', () => {
    const lines = [
      ...Array.from({ length: 20 }, (_, at) => `  total_${at} = total_${at - 1} + step(${at})`),
      'export function lateDeclaration(): void {}',
    ]
    const kept = quotableLines(lines, 'src/steps.py')
    expect(kept).toContain('export function lateDeclaration(): void {}')
    expect(kept[0]).toBe(lines[0])
    expect(kept.join('\n').length).toBeLessThanOrEqual(lines.join('\n').length * readFoldShare)
  })

  it('names the file, what was left out and how to read it back, then the kept lines verbatim', () => {
    const fold = readFold(designDoc.join('\n'), 'docs/design.md')
    const [note, ...kept] = fold.split('\n')
    expect(note).toBe(
      `[ctxgate folded this read of docs/design.md to ${kept.length} of its ${designDoc.length} lines, code and headings kept, prose left out; read the file again (an offset and limit for a part) to see the rest]`,
    )
    expect(kept).toEqual(quotableLines(designDoc, 'docs/design.md'))
  })

  it('is computed once per content and path: the same hash gives the fold of its first text', () => {
    const text = designDoc.join('\n')
    expect(readFoldOf({ hash: 'h-read-fold-1', text }, 'docs/design.md')).toBe(readFold(text, 'docs/design.md'))
    expect(readFoldOf({ hash: 'h-read-fold-1', text: 'other' }, 'docs/design.md')).toBe(
      readFold(text, 'docs/design.md'),
    )
    // Another path is another fold: the note names the file.
    expect(readFoldOf({ hash: 'h-read-fold-1', text }, 'docs/other.md')).toContain('read of docs/other.md')
  })

  it('only a read of a named file folds, and only when the fold keeps well under the read', () => {
    const estimator = new TokenEstimator()
    const text = designDoc.join('\n')
    const result: ToolResultView = { id: 'r', message: 2, tokens: estimator.text(text), hash: 'h-rf-2', text }
    expect(readPathOf({ name: 'Read', input: { file_path: 'docs/design.md' } })).toBe('docs/design.md')
    expect(readPathOf({ name: 'bash', input: { command: 'cat docs/design.md' } })).toBe('docs/design.md')
    expect(readPathOf({ name: 'bash', input: { command: 'npm test' } })).toBeUndefined()
    expect(readFoldFor(result, { name: 'Read', input: { file_path: 'docs/design.md' } }, estimator)).toBe(
      readFold(text, 'docs/design.md'),
    )
    expect(readFoldFor(result, { name: 'Grep', input: { pattern: 'x' } }, estimator)).toBeUndefined()
    // A read whose fold would keep most of it is cleared instead.
    const small = { ...result, hash: 'h-rf-3', tokens: estimator.text(readFold(text, 'docs/design.md')) }
    expect(readFoldFor(small, { name: 'Read', input: { file_path: 'docs/design.md' } }, estimator)).toBeUndefined()
  })

  it('keeps only lines of the read, in order, under half its characters, the same every time (property)', () => {
    const line = fc.oneof(
      fc.constantFrom('```', '# Heading', '| a | b |', 'uses `thing` here', '', '// note', 'plain words here'),
      fc.constantFrom('const valueOne = compute(1)', 'export class Widget {', '  return value;', '}'),
      fc.string({ maxLength: 60 }),
    )
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 80 }),
        fc.constantFrom('a.md', 'b.ts', 'c.py', 'd.txt'),
        (lines, path) => {
          const kept = quotableLines(lines, path)
          expect(kept.join('\n').length).toBeLessThanOrEqual(lines.join('\n').length * readFoldShare)
          let from = 0
          for (const entry of kept) {
            const at = lines.indexOf(entry, from)
            expect(at).toBeGreaterThanOrEqual(from)
            from = at + 1
          }
          expect(readFold(lines.join('\n'), path)).toBe(readFold(lines.join('\n'), path))
        },
      ),
    )
  })
})
