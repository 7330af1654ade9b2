import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { distinctiveScore, linesToKeep, maxKeptLines } from '../../src/rewrite/fold-lines.ts'
import { foldSummary, foldSummaryOf } from '../../src/rewrite/notes.ts'

const filler = Array.from({ length: 40 }, (_, at) => `plain words on line ${at} of the log`)

describe('the lines a fold keeps whole', () => {
  it('scores paths, snake_case and camelCase identifiers and error words; plain prose scores nothing', () => {
    expect(distinctiveScore('see src/rewrite/plan.ts')).toBe(2)
    expect(distinctiveScore('call clear_order and planRewrite')).toBe(2)
    expect(distinctiveScore('AssertionError: expected 1')).toBe(1)
    expect(distinctiveScore('error: expected 1')).toBe(2)
    expect(distinctiveScore('FAIL the suite')).toBe(2)
    expect(distinctiveScore('just some words here, nothing more')).toBe(0)
    // Short or one-hump words are not identifiers, and nothing matches inside a longer word.
    expect(distinctiveScore('a_b fooBr okay Errors')).toBe(0)
  })

  it('keeps the most distinctive lines, in their order, trimmed, at most eight', () => {
    const lines = [
      ...filler.slice(0, 10),
      '  FAIL tests/unit/plan.test.ts > planRewrite keeps the newest round',
      ...filler.slice(10, 20),
      'at Object.<anonymous> (src/rewrite/plan.ts:42:7)',
      ...filler.slice(20),
    ]
    const kept = linesToKeep(lines, lines.join('\n').length)
    expect(kept).toEqual([
      'FAIL tests/unit/plan.test.ts > planRewrite keeps the newest round',
      'at Object.<anonymous> (src/rewrite/plan.ts:42:7)',
    ])
    const many = Array.from({ length: 30 }, (_, at) => `src/dir_${at}/file_${at}.ts changed`)
    expect(linesToKeep([...many, ...filler], 100_000)).toHaveLength(maxKeptLines)
  })

  it('keeps under a quarter of the output, and skips blob lines over 200 characters', () => {
    const line = 'src/a/b.ts: error in load_settings'
    expect(linesToKeep([line, 'x'], line.length + 2)).toEqual([])
    expect(linesToKeep([`src/a.ts ${'z'.repeat(300)}`, ...filler], 100_000)).toEqual([])
  })

  it('keeps under 600 characters however long the output, since every later request carries them', () => {
    // Eight 150-character lines naming paths, in an output far larger than four times their length.
    const distinctive = Array.from({ length: 8 }, (_, at) => `Error in src/module_${at}/file.ts: ${'x'.repeat(110)}`)
    const lines = [...distinctive, ...Array.from({ length: 2_000 }, () => 'plain words of the log')]
    const kept = linesToKeep(lines, lines.join('\n').length)
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.join('').length).toBeLessThanOrEqual(600)
    expect(kept.length).toBeLessThan(distinctive.length)
  })

  it('a fold names the kept lines verbatim, and says nothing more when no line is distinctive', () => {
    const text = [...filler, 'Error: cannot find module src/config/load-config.ts', ...filler].join('\n')
    const summary = foldSummary(text)
    expect(summary).toContain('\nLines kept as they were:\nError: cannot find module src/config/load-config.ts\n')
    expect(foldSummary(filler.join('\n'))).not.toContain('Lines kept')
  })

  it('a result is summarized once per content: the same hash gives the summary of its text', () => {
    const text = [...filler, 'Error in src/app.ts'].join('\n')
    expect(foldSummaryOf({ hash: 'h-fold-1', text })).toBe(foldSummary(text))
    // Same content, same hash: the summary is not computed again (a different text under it would be a hash collision).
    expect(foldSummaryOf({ hash: 'h-fold-1', text: 'other' })).toBe(foldSummary(text))
  })

  it('a fold is a pure function of the output and never longer than the kept share allows (property)', () => {
    const token = fc.constantFrom('src/a/b.ts', 'load_settings', 'planRewrite', 'error', 'plain', 'words', '42')
    const line = fc.array(token, { minLength: 1, maxLength: 8 }).map((words) => words.join(' '))
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 60 }), (lines) => {
        const text = lines.join('\n')
        const kept = linesToKeep(lines, text.length)
        expect(kept.length).toBeLessThanOrEqual(maxKeptLines)
        expect(kept.join('').length).toBeLessThanOrEqual(text.length * 0.25)
        for (const entry of kept) expect(lines.map((raw) => raw.trim())).toContain(entry)
        expect(foldSummary(text)).toBe(foldSummary(text))
      }),
    )
  })
})
