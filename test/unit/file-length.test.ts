import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

/** A file longer than this does more than one job: split it by job. */
const maxLines = 350
const srcRoot = join(import.meta.dirname, '../../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(ts|js)$/.test(entry.name) ? [path] : []
  })
}

/** Lines as an editor numbers them: a final newline does not start another. */
export function lineCount(text: string): number {
  if (text.length === 0) return 0
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
}

describe('file length', () => {
  it(`keeps every TypeScript and browser script file in src at ${maxLines} lines or fewer`, () => {
    const offenders = sourceFiles(srcRoot)
      .map((path) => ({ file: relative(srcRoot, path), lines: lineCount(readFileSync(path, 'utf8')) }))
      .filter(({ lines }) => lines > maxLines)
    expect(offenders).toEqual([])
  })

  it('counts lines as wc -l does for a file ending in a newline, and a last line without one', () => {
    expect(lineCount('a\nb\n')).toBe(2)
    expect(lineCount('a\nb')).toBe(2)
    expect(lineCount('')).toBe(0)
  })
})
