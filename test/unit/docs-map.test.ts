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
    for (const file of [...filesUnder('src', '.ts'), ...filesUnder('bench', '.ts')]) {
      const comments = readFileSync(join(root, file), 'utf8')
        .split('\n')
        .filter((line) => /^\s*(\/\/|\/\*|\*)/.test(line) || line.includes(' // '))
        .join('\n')
      expect(comments, file).not.toMatch(/DESIGN §|model-apis|reference\/tokens\.md|\.\.\/shared\/reference/)
      for (const [cited] of comments.matchAll(/\bdocs\/[\w/-]+\.md\b/g))
        expect(existsSync(join(root, cited)), `${file} → ${cited}`).toBe(true)
    }
  })
})
