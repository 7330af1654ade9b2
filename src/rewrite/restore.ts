/**
 * Restore on use (docs/quality.md, "Restored when the agent uses it"): the agent's newest message
 * shows which cleared or folded results it needs again. An edit of a file (Edit, Write, a patch)
 * needs the reads of that file; a tool input quoting a line of a result (an Edit's old_string, a
 * patch's context) needs that result. Replay shows the agent goes on editing the same file for
 * many requests, quoting its read each time, so such a result is un-frozen and sent whole again.
 */
import { callsOfView, latestReadsOf, normalPath, type ToolCall } from './clear-order.ts'
import { inUse } from './in-use.ts'
import { inputStrings } from './distinctive.ts'
import { linesOf, minQuotedLine } from './quoted.ts'
import { callTarget, parsedInput } from './tool-kind.ts'
import type { MessageView, ToolResultView } from './types.ts'

/** Codex's apply_patch and unified diffs name the files they change on these lines. */
const patchFileLine = /^(?:\*\*\* (?:Update|Add) File: |\+\+\+ (?:b\/)?)(\S.*?)\s*$/gm

/**
 * The results before the newest assistant message that it shows it needs: reads of a file it edits
 * (not superseded by a later read or rewrite of it), and, with `quotes`, the one result holding a
 * line its tool inputs quote (a line several results hold, such as a shared import, says nothing of
 * which). Below budget only the first kind is asked for: on the long replays the quoted lines came
 * back from results the agent's later messages did not need, and cost a run 10 points
 * (BENCHMARKS.md, "Needed but hidden").
 */
export function wantedBack(messages: readonly MessageView[], quotes = true): Set<string> {
  // The pipeline plans a request up to three times over the same message list: the answer is the same.
  // Kept per list (not in a module variable), so a request's views are not held past the request.
  const answers = answersByView.get(messages) ?? {}
  const known = quotes ? answers.withQuotes : answers.withoutQuotes
  if (known) return new Set(known)
  const wanted = wantedIn(messages, quotes)
  answersByView.set(messages, { ...answers, [quotes ? 'withQuotes' : 'withoutQuotes']: wanted })
  return new Set(wanted)
}

const answersByView = new WeakMap<
  readonly MessageView[],
  { readonly withQuotes?: ReadonlySet<string>; readonly withoutQuotes?: ReadonlySet<string> }
>()

function wantedIn(messages: readonly MessageView[], quotes: boolean): Set<string> {
  const wanted = new Set<string>()
  const newest = newestAssistant(messages)
  if (newest < 0) return wanted
  const message = messages[newest] as MessageView
  const inputs = (message.toolCallInputs ?? []).map(parsedInput)
  const paths = editedPaths(
    message.toolCallIds.map((_, position) => ({
      name: message.toolCallNames?.[position] ?? '',
      input: inputs[position],
    })),
  )
  // Code lines come from multi-line inputs (an old_string, a file's content, a patch), as the measure
  // counts them (docs/quality.md): a one-line input such as a path or a command quotes no code.
  const quoted = new Set(quotes ? linesOf(inputs.flatMap(inputStrings).filter(isMultiLine)) : [])
  // Over budget, so are the results it quotes many distinctive strings of (in-use.ts).
  if (quotes) for (const id of stronglyUsed(messages)) wanted.add(id)
  if (paths.length === 0 && quoted.size === 0) return wanted
  const latestReads = paths.length > 0 ? readsOfPaths(callsOfView(messages), paths) : new Set<string>()
  const holders = new Map<string, string[]>()
  const endings = new Set([...quoted].map(endingOf))
  for (const result of resultsBefore(messages, newest)) {
    if (quoted.size > 0)
      for (const line of quotedLinesIn(result.text, quoted, endings))
        holders.set(line, [...(holders.get(line) ?? []), result.id])
    if (latestReads.has(result.id)) wanted.add(result.id)
  }
  for (const ids of holders.values()) if (ids.length === 1) wanted.add(ids[0] as string)
  return wanted
}

/**
 * The newest message quotes this many distinctive strings that only this result holds: it is working
 * from it (issue-398 quotes 11 strings of a design document a forced cut cleared, then goes on quoting
 * it for twenty requests). Over budget such a result comes back; below budget, where a restore far back
 * rewrites the cache, it did not pay: on the long replays it took the bill from 0.860x to 0.887x
 * careful direct for 2 events fewer of 90 (BENCHMARKS.md, "Needed but hidden").
 */
export const strongUse = 3

/** Results the newest message quotes `strongUse` distinctive strings of. */
export function stronglyUsed(messages: readonly MessageView[]): Set<string> {
  const strong = new Set<string>()
  for (const [id, count] of inUse(messages).byNewest) if (count >= strongUse) strong.add(id)
  return strong
}

const isMultiLine = (text: string): boolean => text.includes('\n')

function newestAssistant(messages: readonly MessageView[]): number {
  for (let index = messages.length - 1; index >= 0; index--) if (messages[index]?.role === 'assistant') return index
  return -1
}

function resultsBefore(messages: readonly MessageView[], end: number): ToolResultView[] {
  return messages.slice(0, end).flatMap((message) => message.toolResults)
}

/** Files the calls write or edit: named in the input, or on a patch's file lines. */
function editedPaths(calls: readonly { readonly name: string; readonly input: unknown }[]): string[] {
  const paths: string[] = []
  for (const { name, input } of calls) {
    const target = callTarget(name, input)
    if (target.kind !== 'edit') continue
    if (target.path !== undefined) paths.push(normalPath(target.path))
    for (const text of inputStrings(input))
      for (const match of text.matchAll(patchFileLine)) if (match[1]) paths.push(normalPath(match[1]))
  }
  return paths
}

/** The latest reads, among `calls`, of the given files (not superseded by a later read or rewrite). */
function readsOfPaths(calls: readonly ToolCall[], paths: readonly string[]): Set<string> {
  return latestReadsOf(calls, (path) => paths.some((edited) => samePath(edited, path)))
}

/**
 * The reads the newest calls would have restored: with `calls` every call up to and including
 * `newest`, the latest reads of the files `newest` edits. Replay's hindsight schedule keeps these
 * whole, as the same quality floor (docs/economy.md, "The best schedule with hindsight").
 */
export function readsAnEditNeeds(calls: readonly ToolCall[], newest: readonly ToolCall[]): Set<string> {
  const paths = editedPaths(newest.map((call) => ({ name: call.name, input: parsedInput(call.input) })))
  return paths.length > 0 ? readsOfPaths(calls, paths) : new Set()
}

/** The same file, one path absolute and the other relative to the agent's working directory. */
function samePath(a: string, b: string): boolean {
  const left = normalPath(a)
  const right = normalPath(b)
  return left === right || left.endsWith(`/${right}`) || right.endsWith(`/${left}`)
}

/** As long as the shortest line quoted (quoted.ts): a quoted line's ending is never cut by numbering or patch marks. */
const minQuotedEnding = 20

/** A line's last characters: numbering and patch marks only change its start, so most lines are told apart by this alone. */
function endingOf(line: string): string {
  return line.trimEnd().slice(-minQuotedEnding)
}

/** The quoted lines this text holds, each once; only lines whose ending matches are normalized (linesOf). */
function quotedLinesIn(text: string, quoted: ReadonlySet<string>, endings: ReadonlySet<string>): Set<string> {
  const found = new Set<string>()
  for (const raw of text.split('\n')) {
    if (raw.length < minQuotedLine || !endings.has(endingOf(raw))) continue
    const [line] = linesOf([raw])
    if (line !== undefined && quoted.has(line)) found.add(line)
  }
  return found
}
