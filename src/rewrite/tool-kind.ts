/**
 * What a tool call does, from its name and input: reads a file, writes or edits one, runs a
 * command, searches, or something else. Agents name their tools differently (Claude Code `Read`,
 * opencode `read`, OpenHands `str_replace_editor`, shell-only agents `cat FILE`), so this is a
 * best guess by name and, for shells, by the command's first word.
 */

export type ToolKind = 'read' | 'edit' | 'command' | 'search' | 'other'

export interface CallTarget {
  readonly kind: ToolKind
  /** The file it reads or writes, when it names one. */
  readonly path?: string
  /** A shell read of part of the file (`sed -n 1,80p`, `head`, `tail`): it supersedes no other read. */
  readonly partial?: true
}

const readTools = new Set(['read', 'read_file', 'readfile', 'view', 'view_file', 'open_file', 'cat'])
const editTools = new Set([
  'edit',
  'multiedit',
  'write',
  'write_file',
  'create_file',
  'apply_patch',
  'str_replace',
  'notebookedit',
  'patch',
])
const searchTools = new Set(['grep', 'glob', 'search', 'find', 'list', 'ls', 'websearch', 'codebase_search'])
const commandTools = new Set([
  'bash',
  'shell',
  'execute_bash',
  'run_command',
  'exec_command',
  'terminal',
  'local_shell',
])
const pathFields = ['file_path', 'path', 'filePath', 'filename', 'file', 'notebook_path']

/** The kind and, where named, the file of one call. */
export function callTarget(name: string, input: unknown): CallTarget {
  const lower = name.toLowerCase()
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {}
  const path = pathFields.map((field) => fields[field]).find((value) => typeof value === 'string') as string | undefined
  const withPath = (kind: ToolKind): CallTarget => (path ? { kind, path } : { kind })
  if (lower === 'str_replace_editor' || lower === 'text_editor')
    return withPath(fields['command'] === 'view' ? 'read' : 'edit')
  if (readTools.has(lower)) return withPath('read')
  if (editTools.has(lower)) return withPath('edit')
  if (searchTools.has(lower)) return { kind: 'search' }
  if (commandTools.has(lower)) return shellTarget(commandOf(fields))
  return { kind: 'other' }
}

export function commandOf(fields: Record<string, unknown>): string {
  const command = fields['command'] ?? fields['cmd']
  if (Array.isArray(command)) return command.filter((part) => typeof part === 'string').join(' ')
  return typeof command === 'string' ? command : ''
}

/** A shell command that only prints one file (`cat F`, `sed -n 1,80p F`, `head F`, `nl F`) is a read of it. */
export function shellTarget(command: string): CallTarget {
  const trimmed = command.trim().replace(/^(?:bash -lc |sh -c )['"]?/, '')
  const read =
    /^(?:cat|nl(?: -\S+)*|head(?: -n ?\d+| -\d+)?|tail(?: -n ?\d+| -\d+)?|sed -n ['"]?[\d,]+p['"]?)\s+(['"]?)([^\s|;&>'"]+)\1\s*['"]?$/.exec(
      trimmed,
    )
  if (read?.[2])
    return /^(?:cat|nl)\b/.test(trimmed)
      ? { kind: 'read', path: read[2] }
      : { kind: 'read', path: read[2], partial: true }
  if (/^(?:grep|rg|find|ls|git grep|fd|tree)\b/.test(trimmed)) return { kind: 'search' }
  if (/^(?:cat\s*>|tee)\s/.test(trimmed)) return { kind: 'edit' }
  return { kind: 'command' }
}

/** OpenAI tool calls carry their arguments as a JSON string. */
export function parsedInput(input: unknown): unknown {
  if (typeof input !== 'string') return input
  try {
    return JSON.parse(input) as unknown
  } catch {
    return input
  }
}

/** A word of a command that runs tests: a runner, a test script or folder, a build tool's test target. */
const testWord = /(?:^|\/)(?:tests?|jest|vitest|pytest|mocha|unittest|tox|rspec|phpunit|runtests)(?:$|[/:.])/

/** Programs that handle files or text, whatever test files they name: never a test run (`test -f F` is the shell's). */
const notRunners = new Set([
  'test',
  'sed',
  'cat',
  'ls',
  'grep',
  'rg',
  'echo',
  'rm',
  'mkdir',
  'cp',
  'mv',
  'touch',
  'chmod',
  'git',
  'find',
  'head',
  'tail',
  'wc',
  'diff',
  'tee',
  'awk',
  'nl',
  'cd',
])

/** The words of a runner itself (`npx jest`, `python -m pytest`, `go test`), not of what it runs. */
const runnerWords = new Set(
  'npx npm yarn pnpm bun run exec node python python3 uv poetry bundle jest vitest pytest mocha unittest tox go cargo make test rspec phpunit'.split(
    ' ',
  ),
)

/**
 * The tests a shell command runs, as a comparable key: its first step that runs tests (`cd DIR &&`
 * left out), cut at its first pipe, without environment settings, flags, redirections and the
 * runner's own words (`NODE_OPTIONS=… npx jest a.test.ts --verbose 2>&1 | tail` is `a.test.ts`, as is
 * `npm test a.test.ts`), so a later run of the same tests is recognized however it was run and printed.
 * Undefined for a command that runs none.
 */
export function testRunKey(command: string): string | undefined {
  // A test run is one line; what follows (a heredoc's body) would only bring false words in.
  const line = command.trim().split('\n', 1)[0] ?? ''
  if (line.length > maxLine) return parseTestRun(line)
  // Every request classes the session's calls again: each line is parsed once.
  if (knownRuns.has(line)) return knownRuns.get(line)
  const key = parseTestRun(line)
  knownRuns.set(line, key)
  if (knownRuns.size > maxKnownRuns) knownRuns.delete(knownRuns.keys().next().value as string)
  return key
}

/** Lines remembered (at most this long, so at most a few MB), the oldest dropped first. */
const maxLine = 400
const maxKnownRuns = 5_000
const knownRuns = new Map<string, string | undefined>()

function parseTestRun(command: string): string | undefined {
  const steps = command
    .trim()
    .replace(/^(?:bash -lc |sh -c )['"]?/, '')
    .split(/&&|\|\||;/)
  for (const step of steps) {
    const words = (step.split('|')[0] ?? '')
      .split(/\s+/)
      .filter((word) => word !== '' && !word.startsWith('-') && !/^[A-Za-z_]\w*=/.test(word) && !/^\d*>/.test(word))
    if (notRunners.has(words[0] ?? '') || !words.some((word) => testWord.test(word))) continue
    // What it names beyond the runner are the tests, whichever runner ran them (`npx jest F`, `npm test F`).
    const targets = words.filter((word) => !runnerWords.has(word)).map((word) => word.replace(/^\.\//, ''))
    return targets.length > 0 ? targets.toSorted().join(' ') : words.join(' ')
  }
  return undefined
}
