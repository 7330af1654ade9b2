/**
 * What an old tool call's input becomes once ctxgate clears it (docs/quality.md, "Old tool inputs"):
 * every string in it of `minClearedChars` or more (an Edit's old_string and new_string, a Write's
 * content, a patch body) is replaced by a short note of the same type, saying how many characters
 * went and which file holds the result. Short fields (file_path, command, pattern), numbers, keys
 * and unknown fields stay as they are, so the call keeps its shape. A pure function of the input,
 * so a frozen clear comes out byte for byte the same on every request and every replica.
 */
import { callTarget } from './tool-kind.ts'

/**
 * How the wire format carries a call's input: an object (Messages `tool_use.input`, a Responses
 * `local_shell_call.action`), a JSON string (Chat `function.arguments`, Responses `function_call.arguments`),
 * or free text (a Responses `custom_tool_call.input`, a Chat custom call's `input`: Codex's apply_patch).
 */
export type InputForm = 'object' | 'json' | 'text'

/** One call's input as the adapter found it, in the form it must be written back in. */
export interface ClearableInput {
  readonly form: InputForm
  readonly value: unknown
}

/** Strings shorter than this stay: paths, commands, patterns, short replacements cost less than the cache rewrite. */
export const minClearedChars = 400
/** Paths named in a note, at most this long each. */
const maxPathChars = 160

/** Codex's apply_patch and unified diffs name the files they change on these lines (as restore.ts reads them). */
export const patchFileLine = /^(?:\*\*\* (?:Update|Add) File: |\+\+\+ (?:b\/)?)(\S.*?)\s*$/m

/** The note in place of a cleared string: what went, its size, and where its result is now. */
export function clearedInputNote(chars: number, path: string | undefined): string {
  const size = `${chars.toLocaleString('en-US')} characters`
  return path === undefined
    ? `[ctxgate: ${size} of this old tool input cleared to save room; the call ran as the agent sent it]`
    : `[ctxgate: ${size} of this old tool input cleared to save room; read ${shortPath(path)} to see the file as it is now]`
}

/** The cleared input, in the same form; undefined when nothing in it is long enough to clear (or it does not parse). */
export function clearedInput(name: string, input: ClearableInput): unknown {
  if (input.form === 'text') {
    if (typeof input.value !== 'string' || input.value.length < minClearedChars) return undefined
    return clearedInputNote(input.value.length, patchFileLine.exec(input.value)?.[1])
  }
  if (input.form === 'object') return clearedValue(input.value, pathOf(name, input.value))
  if (typeof input.value !== 'string' || input.value.length < minClearedChars) return undefined
  const parsed = parsedJson(input.value)
  // Arguments that are not a JSON object or array stay as sent: what replaces them must stay valid JSON.
  if (typeof parsed !== 'object' || parsed === null) return undefined
  return clearedJsonText(input.value, pathOf(name, parsed))
}

/**
 * The JSON text with each long string value replaced by its note, every other byte as sent: parsing
 * and writing it out again would round numbers past 2^53 and change the client's spacing.
 */
function clearedJsonText(text: string, path: string | undefined): string | undefined {
  let out = ''
  let from = 0
  for (let at = text.indexOf('"'); at >= 0; at = text.indexOf('"', at)) {
    const end = stringEnd(text, at)
    const next = text.slice(end).trimStart()[0]
    const value = next === ':' ? '' : (parsedJson(text.slice(at, end)) as string)
    if (value.length >= minClearedChars) {
      out += text.slice(from, at) + JSON.stringify(clearedInputNote(value.length, path))
      from = end
    }
    at = end
  }
  return from === 0 ? undefined : out + text.slice(from)
}

/** Index just past the closing quote of the JSON string starting at `start` (the text is valid JSON). */
function stringEnd(text: string, start: number): number {
  let at = start + 1
  while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1
  return at + 1
}

/** The value with its long strings replaced, keys in their order; undefined when none is long enough. */
function clearedValue(value: unknown, path: string | undefined): unknown {
  if (typeof value === 'string')
    return value.length >= minClearedChars ? clearedInputNote(value.length, path) : undefined
  if (Array.isArray(value)) {
    let changed = false
    const items = value.map((item: unknown) => {
      const cleared = clearedValue(item, path)
      if (cleared === undefined) return item
      changed = true
      return cleared
    })
    return changed ? items : undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  let changed = false
  const entries = Object.entries(value).map(([key, item]): [string, unknown] => {
    const cleared = clearedValue(item, path)
    if (cleared === undefined) return [key, item]
    changed = true
    return [key, cleared]
  })
  // Object.fromEntries would treat a `__proto__` key as a prototype: defined one by one instead.
  if (!changed) return undefined
  const out: Record<string, unknown> = {}
  for (const [key, item] of entries)
    Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true })
  return out
}

/** The file the call wrote or edited, when its input names one (a patch's first file line otherwise). */
export function pathOf(name: string, input: unknown): string | undefined {
  const path = callTarget(name, input).path
  if (path !== undefined) return path
  for (const text of stringsIn(input)) {
    const line = patchFileLine.exec(text)?.[1]
    if (line !== undefined) return line
  }
  return undefined
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(stringsIn)
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsIn)
  return []
}

function shortPath(path: string): string {
  const line = path.split('\n', 1)[0] ?? ''
  return line.length > maxPathChars ? `...${line.slice(-(maxPathChars - 3))}` : line
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
