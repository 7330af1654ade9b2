import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

function filesUnder(folder: string, suffix: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
}

describe('the docs are a map', () => {
  it('links every docs/ page from the README', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    for (const page of filesUnder('docs', '.md')) expect(readme, page).toContain(`](${page})`)
  })

  it("defines in docs/architecture.md's glossary every word the code speaks of", () => {
    const architecture = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
    const glossary = architecture.slice(architecture.indexOf('## Glossary'))
    const defined = [...glossary.matchAll(/^\| ([^|]+?) +\|/gm)].map(([, word]) => word)
    const words = ['fold', 'clear', 'drop', 'batch', 'frozen', 'refit', 'told limit', 'head', 'tail']
    words.push('next-edit marker', 'reach back', 'cadence', 'Lindy', 'session kind', 'quality floor')
    words.push('cold cache', 'preamble')
    expect(defined).toEqual(expect.arrayContaining(words))
  })

  it('keeps the README short enough to read', () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length
    expect(lines).toBeLessThanOrEqual(250)
  })

  it('has every relative link in the docs point at a file that exists', () => {
    for (const page of ['README.md', 'BENCHMARKS.md', 'RELIABILITY.md', ...filesUnder('docs', '.md')]) {
      const text = readFileSync(join(root, page), 'utf8')
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (!target || /^[a-z]+:/.test(target)) continue
        expect(existsSync(join(root, page, '..', target)), `${page} → ${target}`).toBe(true)
      }
    }
  })

  it('cites in code comments only documents that ship with the repository', () => {
    const code = [
      ...filesUnder('src', '.ts'),
      ...filesUnder('src', '.js'),
      ...filesUnder('bench', '.ts'),
      ...filesUnder('test', '.ts').filter((file) => file !== 'test/unit/docs-map.test.ts'),
    ]
    for (const file of code) {
      const comments = readFileSync(join(root, file), 'utf8')
        .split('\n')
        .filter((line) => /^\s*(\/\/|\/\*|\*)/.test(line) || line.includes(' // '))
        .join('\n')
      // The team's design notes and API references live outside the repository: users do not have them.
      expect(comments, file).not.toMatch(/\bDESIGN\b|model-apis|reference\/tokens\.md|style-anchors|\.\.\/shared\//)
      for (const [cited] of comments.matchAll(/\bdocs\/[\w/-]+\.md\b/g))
        expect(existsSync(join(root, cited)), `${file} → ${cited}`).toBe(true)
    }
  })
})
