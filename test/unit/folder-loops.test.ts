import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const srcRoot = join(import.meta.dirname, '../../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** The top folder of src a file is in; files at src's top level (app.ts, cli.ts…) are the wiring, not a folder. */
function folderOf(path: string): string | undefined {
  const parts = relative(srcRoot, path).split('/')
  return parts.length > 1 ? parts[0] : undefined
}

/** Relative module specifiers a file imports or re-exports (type-only ones included: they are dependencies too). */
export function importsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false)
  const specifiers: string[] = []
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue
    const specifier = statement.moduleSpecifier
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) specifiers.push(specifier.text)
  }
  return specifiers
}

/** Folder → folders it imports from. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>()
  for (const path of sourceFiles(srcRoot)) {
    const from = folderOf(path)
    if (from === undefined) continue
    for (const specifier of importsOf(path, readFileSync(path, 'utf8'))) {
      const to = folderOf(resolve(dirname(path), specifier))
      if (to === undefined || to === from) continue
      graph.set(from, (graph.get(from) ?? new Set()).add(to))
    }
  }
  return graph
}

/** Every cycle's folders, one list per strongly connected group of two or more (Tarjan's algorithm). */
export function loops(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node) as number)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, index.get(next) as number))
    }
    if (low.get(node) !== index.get(node)) return
    const group: string[] = []
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member)
      group.push(member)
      if (member === node) break
    }
    if (group.length > 1) found.push(group.toSorted())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

describe('folder-level imports', () => {
  it('form no loop: no folder of src imports, through any chain, from a folder that imports it', () => {
    expect(loops(folderGraph())).toEqual([])
  })

  it('finds a loop through three folders, and none in a chain', () => {
    const graph = (edges: [string, string][]) =>
      new Map(edges.map(([from, to]) => [from, new Set([to])] as [string, Set<string>]))
    expect(
      loops(
        graph([
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'a'],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']])
    expect(
      loops(
        graph([
          ['a', 'b'],
          ['b', 'c'],
        ]),
      ),
    ).toEqual([])
  })
})
