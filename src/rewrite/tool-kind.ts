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

function commandOf(fields: Record<string, unknown>): string {
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
