import { linesToKeep, quotableLines } from './fold-lines.ts'
import { callTarget, parsedInput } from './tool-kind.ts'
import type { DropMessages } from './types.ts'

/**
 * Every text ctxgate puts into a conversation. Each is a pure function of what it replaces, so the
 * same decision always produces the same bytes (docs/rewriting.md, freezing), even after a restart.
 */
// Short on purpose: it stays in every later request, and systemNote already says why results go. Like every
// text ctxgate puts in a result's place, it starts with "[ctxgate", so it is easy to tell from the tool's own.
export const clearedNote = '[ctxgate: output cleared, run the tool again to see it]'

const maxHintChars = 120

/**
 * The cleared note with how to get the output back: the file to read again or the command to run
 * again (any other tool: the generic note). A pure function of the call, which the
 * client resends unchanged ahead of its result, so it comes out the same on every request.
 */
export function clearedNoteFor(call: { readonly name: string; readonly input: unknown } | undefined): string {
  if (!call || call.name === '') return clearedNote
  const target = callTarget(call.name, parsedInput(call.input))
  if (target.kind === 'read' && target.path)
    return `[ctxgate: output cleared; read ${short(target.path)} again to see it]`
  const command = commandText(call.input)
  if (target.kind === 'command' && command)
    return `[ctxgate: output cleared; run \`${short(command)}\` again to see it]`
  // Any other tool: the generic note already says to run it again.
  return clearedNote
}

function commandText(input: unknown): string | undefined {
  const fields = parsedInput(input)
  if (typeof fields !== 'object' || fields === null) return undefined
  const command = (fields as Record<string, unknown>)['command'] ?? (fields as Record<string, unknown>)['cmd']
  const text = Array.isArray(command) ? command.filter((part) => typeof part === 'string').join(' ') : command
  return typeof text === 'string' && text.trim() !== '' ? text.trim() : undefined
}

/** One line, at most maxHintChars: the note stays in every later request. */
function short(text: string): string {
  const line = text.split('\n')[0] ?? ''
  const cut = line.length > maxHintChars ? `${line.slice(0, maxHintChars - 3)}...` : line
  return cut.length < text.length && !cut.endsWith('...') ? `${cut} ...` : cut
}

export const systemNote =
  'Note from ctxgate, the proxy in front of this model: to keep this conversation within the context window, older tool results may be replaced by a short note or summary. This is expected. Keep working on the task; do not stop early to save room. If you need an old output again, run the tool again.'

export function dropNote(scope: 'turns' | 'rounds', dropped: number): string {
  return scope === 'turns'
    ? `[ctxgate: ${dropped} earlier messages of this conversation were removed to keep it within the model’s context window. The task above still stands; the newest turns follow.]`
    : `[ctxgate: ${dropped} earlier messages (older tool calls and their results) were removed to keep this task within the model’s context window. Keep working on the task above; run a tool again if you need its output.]`
}

/** The drop note in the first message, as the adapter's view counts it once written (its framing included). */
export function dropNoteTokens(
  sizing: { readonly estimator: { text(text: string): number }; readonly dropNoteFraming: number },
  scope: 'turns' | 'rounds',
  dropped: number,
): number {
  return sizing.estimator.text(dropNote(scope, dropped)) + sizing.dropNoteFraming
}

/** The edit that drops messages 1 up to (not including) `keepFrom`, its note in their place. */
export function dropEdit(scope: 'turns' | 'rounds', keepFrom: number): DropMessages {
  return { kind: 'drop-messages', from: 1, to: keepFrom, scope, note: dropNote(scope, keepFrom - 1) }
}

/** Fold summaries by content hash: a frozen fold is written again on every request, and its summary never changes. */
const summariesByHash = new Map<string, string>()
const maxSummaries = 5_000

/** foldSummary of a tool result, computed once per content (the hash identifies it, as frozen decisions do). */
export function foldSummaryOf(result: { readonly hash: string; readonly text: string }): string {
  return remembered(summariesByHash, result.hash, () => foldSummary(result.text))
}

/** The value kept under `key`, computed on first ask; past `maxSummaries` keys the oldest is forgotten. */
function remembered(memo: Map<string, string>, key: string, compute: () => string): string {
  let value = memo.get(key)
  if (value === undefined) {
    value = compute()
    memo.set(key, value)
    if (memo.size > maxSummaries) memo.delete(memo.keys().next().value as string)
  }
  return value
}

/** Read folds by content hash and path: a frozen one is written again on every request, and never changes. */
const readFoldsByKey = new Map<string, string>()

/** readFold of a read's result, computed once per content and path. */
export function readFoldOf(result: { readonly hash: string; readonly text: string }, path: string): string {
  return remembered(readFoldsByKey, `${result.hash}\u0000${path}`, () => readFold(result.text, path))
}

/**
 * A read of `path` folded to the lines the agent is likely to quote (fold-lines.ts, quotableLines),
 * under a one-line note saying what was left out and how to get it back. A pure function of the
 * read's text and path, so it comes out the same on every request and every replica.
 */
export function readFold(text: string, path: string): string {
  const lines = text.split('\n')
  const kept = quotableLines(lines, path)
  return `[ctxgate folded this read of ${short(path)} to ${kept.length.toLocaleString('en-US')} of its ${lines.length.toLocaleString('en-US')} lines, code and headings kept, prose left out; read the file again (an offset and limit for a part) to see the rest]\n${kept.join('\n')}`
}

/** A short summary of a long tool output: its size, exit status if it shows one, its first meaningful line, and the lines it keeps whole. */
export function foldSummary(text: string): string {
  const wrapped = unwrapCommandOutput(text)
  if (wrapped) return wrappedFoldSummary(wrapped)
  const lines = text.split('\n')
  const exit = /(?:exit(?:ed)?(?: with)?(?: code| status)?|returncode>?)\s*[:=]?\s*(-?\d+)/i.exec(text)
  const first = meaningfulLines(lines, 1)[0] ?? ''
  const parts = [`${text.length.toLocaleString('en-US')} characters`, `${lines.length.toLocaleString('en-US')} lines`]
  if (exit) parts.push(`exit status ${exit[1]}`)
  return `[ctxgate folded this tool output (${parts.join(', ')}). It began: ${JSON.stringify(first)}.${keptLines(lines, text.length)} Run the tool again if you need the full output.]`
}

/** The lines the fold keeps whole (fold-lines.ts), verbatim, so the agent can quote them exactly. */
function keptLines(lines: readonly string[], totalChars: number): string {
  const kept = linesToKeep(lines, totalChars)
  return kept.length === 0 ? '' : `\nLines kept as they were:\n${kept.join('\n')}\n`
}

/**
 * Codex wraps every command result in a header (Chunk ID, Wall time, "Process exited with code N",
 * Original token count, then "Output:"); the summary must quote the output, not the header.
 */
function unwrapCommandOutput(text: string): { exit: string | undefined; output: string } | undefined {
  const header = /^Chunk ID: [^\n]*\n(?:[^\n]*\n)*?Output:\n?/.exec(text)
  if (!header) return undefined
  const exit = /^Process exited with code (-?\d+)$/m.exec(header[0])?.[1]
  return { exit, output: text.slice(header[0].length) }
}

function wrappedFoldSummary(wrapped: { exit: string | undefined; output: string }): string {
  const lines = wrapped.output.split('\n')
  const parts = [
    `${wrapped.output.length.toLocaleString('en-US')} characters`,
    `${lines.length.toLocaleString('en-US')} lines of output`,
  ]
  if (wrapped.exit !== undefined) parts.push(`exit code ${wrapped.exit}`)
  const first = meaningfulLines(lines, 3)
  const began =
    first.length > 0 ? `It began: ${first.map((line) => JSON.stringify(line)).join(' / ')}` : 'It printed nothing'
  return `[ctxgate folded this command output (${parts.join(', ')}). ${began}.${keptLines(lines, wrapped.output.length)} Run the command again if you need the full output.]`
}

/** The first `count` lines with something in them besides rules and box drawing, each cut to 160 characters. */
function meaningfulLines(lines: readonly string[], count: number): string[] {
  return lines
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !/^[-=#*_`~<>|+\s]+$/.test(line))
    .slice(0, count)
    .map((line) => (line.length > 160 ? `${line.slice(0, 157)}...` : line))
}
