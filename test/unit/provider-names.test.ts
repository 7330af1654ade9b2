import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * Shared code names no provider (docs/architecture.md, "Where provider names may appear"): it looks
 * each one up in the registry. Provider names belong in `providers/` and `config/`, and in the tools
 * that speak particular wire formats: the fake upstream (`mock/`), which answers as each API does,
 * and replay (`replay/`), which imports each client's recordings and replays them in the Messages
 * format. The command line's flags come from the one list. Comments may name a provider (they cite its docs).
 */
const allowed = [/^providers\//, /^config\//, /^mock\//, /^replay\//]
/** Files that name one for a reason of their own, each said here (none left). */
const exceptions: Readonly<Record<string, string>> = {}
const srcRoot = join(import.meta.dirname, '../../src')
const providerName = /anthropic|openai/i

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(ts|js)$/.test(entry.name) ? [path] : []
  })
}

/** The folders every request walks through, which the issue says must name no provider. */
const sharedFolders = ['forward', 'stream', 'upstream', 'metrics', 'websocket', 'request', 'app']

/** The tokens of code, comments left out. */
function codeTokens(text: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text)
  const found: string[] = []
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan())
    found.push(scanner.getTokenText())
  return found
}

/** The tokens of code (comments left out) that name a provider. */
export function providerMentions(text: string): string[] {
  return codeTokens(text).filter((token) => providerName.test(token))
}

describe('provider names', () => {
  it('appear in code only where a provider or wire format is the job', () => {
    const offenders = sourceFiles(srcRoot)
      .map((path) => relative(srcRoot, path))
      .filter((file) => !allowed.some((pattern) => pattern.test(file)) && !(file in exceptions))
      .map((file) => ({ file, mentions: providerMentions(readFileSync(join(srcRoot, file), 'utf8')) }))
      .filter(({ mentions }) => mentions.length > 0)
    expect(offenders).toEqual([])
  })

  it("leaves the forwarding path's shared folders no provider's status or header: the registry names them", () => {
    // What the issue found in shared code besides names: the overload status and the request-id headers.
    const providerFacts = /^(529|'request-id'|'x-request-id'|"request-id"|"x-request-id")$/
    const offenders = sourceFiles(srcRoot)
      .map((path) => relative(srcRoot, path))
      .filter((file) => sharedFolders.some((folder) => file.startsWith(`${folder}/`)))
      .map((file) => ({
        file,
        facts: codeTokens(readFileSync(join(srcRoot, file), 'utf8')).filter((token) => providerFacts.test(token)),
      }))
      .filter(({ facts }) => facts.length > 0)
    expect(offenders).toEqual([])
  })

  it('reads names in code and strings, not in comments', () => {
    expect(providerMentions("// Anthropic's docs\nconst x = 'openai-responses' /* OpenAI */")).toEqual([
      "'openai-responses'",
    ])
    expect(providerMentions('const anthropicLimit = 1')).toEqual(['anthropicLimit'])
  })
})
