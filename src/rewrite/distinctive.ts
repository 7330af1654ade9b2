/**
 * Distinctive strings of one agent message: what the agent could only have written by reading it
 * somewhere (docs/quality.md). Paths, identifiers with `_` or camelCase, hex ids, long numbers,
 * quoted strings, and code lines of multi-line tool inputs.
 */

export type StringKind = 'path' | 'identifier' | 'hex' | 'number' | 'quoted' | 'code-line'

export interface DistinctiveString {
  readonly text: string
  readonly kind: StringKind
  /** Where in the message it was: `text`, or the tool name and input field (`Edit.old_string`). */
  readonly where: string
}

/** A string of the message to search, and whether it came from a multi-line tool input (code lines count there only). */
export interface MessageString {
  readonly text: string
  readonly where: string
  readonly toolInput: boolean
}

const minIdentifier = 6
const minQuoted = 8
const minCodeLine = 20

// Each pattern is bounded by characters that cannot continue the token, so nothing matches inside a longer word.
const pathPattern = /(?<![\w./~@-])(?:~|\.{1,2})?\/?[\w.@+-]+(?:\/[\w.@+-]+)+\/?(?![\w/-])/g
const wordPattern = /(?<![\w$])[A-Za-z_$][\w$]*(?![\w$])/g
const hexPattern =
  /(?<![\w-])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{7,64})(?![\w-])/gi
const numberPattern = /(?<![\w.])\d{4,}(?![\w])/g
const quotedPattern = /"([^"\n\\]{8,})"|'([^'\n\\]{8,})'|`([^`\n]{8,})`/g

/** Every distinctive string of the message's strings, each once (first place it was seen). */
export function distinctiveStrings(strings: readonly MessageString[]): DistinctiveString[] {
  const found = new Map<string, DistinctiveString>()
  const add = (text: string, kind: StringKind, where: string): void => {
    if (!found.has(text)) found.set(text, { text, kind, where })
  }
  for (const { text, where, toolInput } of strings) {
    for (const match of text.matchAll(pathPattern)) if (isPath(match[0])) add(match[0], 'path', where)
    for (const match of text.matchAll(wordPattern)) if (isIdentifier(match[0])) add(match[0], 'identifier', where)
    for (const match of text.matchAll(hexPattern)) if (isHexId(match[0])) add(match[0], 'hex', where)
    for (const match of text.matchAll(numberPattern)) add(match[0], 'number', where)
    for (const match of text.matchAll(quotedPattern)) {
      const inner = (match[1] ?? match[2] ?? match[3] ?? '').trim()
      if (inner.length >= minQuoted) add(inner, 'quoted', where)
    }
    if (toolInput && text.includes('\n'))
      for (const line of text.split('\n')) {
        const trimmed = line.trim()
        if (trimmed.length >= minCodeLine) add(trimmed, 'code-line', where)
      }
  }
  return [...found.values()]
}

/** At least two segments with something word-like in each, not a fraction or a date. */
function isPath(candidate: string): boolean {
  const segments = candidate.split('/').filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
  if (segments.length === 0) return false
  if (candidate.length < 4 || !/[A-Za-z]/.test(candidate)) return false
  return segments.length >= 2 || candidate.startsWith('/') || candidate.startsWith('~') || candidate.startsWith('.')
}

/** `snake_case`, `camelCase` or `PascalCase` with two humps, at least 6 characters; not only underscores. */
function isIdentifier(word: string): boolean {
  if (word.length < minIdentifier || !/[A-Za-z]/.test(word)) return false
  if (/[A-Za-z0-9]_[A-Za-z0-9]|^_+[A-Za-z0-9]|[A-Za-z0-9]_+$/.test(word)) return true
  return /[a-z][A-Z]/.test(word) || /[A-Z][a-z]+[A-Z]/.test(word)
}

/** Hex with both digits and letters (a plain word like `deadbeef` or a number is not an id). */
function isHexId(candidate: string): boolean {
  return /\d/.test(candidate) && /[a-f]/i.test(candidate)
}

/** Every string in a tool input, however deeply nested. */
export function inputStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(inputStrings)
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(inputStrings)
  return []
}
