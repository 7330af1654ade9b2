import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/** Functions longer than this many lines of their own (nested functions apart) are hard to read. */
const maxOwnLines = 60
const srcRoot = join(import.meta.dirname, '../../src')

interface Offender {
  readonly where: string
  readonly ownLines: number
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

function isFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  )
}

/** Lines a function spans, less the lines its directly nested functions span. */
export function ownLineCounts(file: string, text: string): { name: string; line: number; ownLines: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const lineOf = (position: number): number => source.getLineAndCharacterOfPosition(position).line
  const span = (node: ts.Node): number => lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1
  const results: { name: string; line: number; ownLines: number }[] = []
  const nestedSpans = (node: ts.Node): number => {
    let total = 0
    node.forEachChild((child) => {
      total += isFunction(child) ? span(child) : nestedSpans(child)
    })
    return total
  }
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body) {
      const name = node.name?.getText(source) ?? '(anonymous)'
      results.push({ name, line: lineOf(node.getStart(source)) + 1, ownLines: span(node) - nestedSpans(node.body) })
    }
    node.forEachChild(visit)
  }
  visit(source)
  return results
}

describe('function length', () => {
  it(`keeps every function in src (the mock and replay too) under ${maxOwnLines} lines of its own`, () => {
    const offenders: Offender[] = []
    for (const path of sourceFiles(srcRoot)) {
      const file = relative(srcRoot, path)
      for (const fn of ownLineCounts(file, readFileSync(path, 'utf8')))
        if (fn.ownLines > maxOwnLines) offenders.push({ where: `${file}:${fn.line} ${fn.name}`, ownLines: fn.ownLines })
    }
    expect(offenders).toEqual([])
  })

  it('counts a nested function apart from the one around it', () => {
    const body = Array.from({ length: 5 }, (_, index) => `  const a${index} = ${index}`).join('\n')
    const text = `function outer() {\n${body}\n  const inner = () => {\n${body}\n  }\n}\n`
    const counts = ownLineCounts('x.ts', text)
    expect(counts.find((fn) => fn.name === 'outer')?.ownLines).toBe(7 + 5 + 2 - 7)
    expect(counts.find((fn) => fn.name === '(anonymous)')?.ownLines).toBe(7)
  })
})
