import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { decompress } from 'fzstd'
import type { Conversation, ToolDefinition } from '../conversation.ts'
import { importClaudeSession, looksLikeClaudeSession } from './claude-session.ts'
import { importClaudeStreamJson, looksLikeClaudeStreamJson } from './claude-stream-json.ts'
import { importCodexExecJson, looksLikeCodexExecJson } from './codex-exec-json.ts'
import { importCodexRollout, looksLikeCodexRollout } from './codex-rollout.ts'
import { importCtxgateJsonl, looksLikeCtxgateJsonl } from './ctxgate-jsonl.ts'
import { importGeminiSession, looksLikeGeminiSession } from './gemini-session.ts'
import { ImportError } from './import-error.ts'
import { importMiniSweAgent, importTextTrajectory, looksLikeMiniSweAgent } from './mini-swe-agent.ts'
import { importOpenHandsRun, looksLikeOpenHands } from './openhands.ts'
import { conversationFromOpenAI } from './openai-messages.ts'
import { isSqliteFile, readOpencodeDatabase, type SessionPick } from './opencode-db.ts'
import { importOpencodeSession, looksLikeOpencodeExport, type OpencodeSession } from './opencode-session.ts'

export interface LoadOptions {
  /** Undo recorded compactions: keep the history, drop the summary. */
  readonly uncompacted: boolean
  /** Prompt file for a Claude Code stream-json or Codex exec --json log (default: NAME.prompt.txt beside it). */
  readonly promptFile?: string
  /** Which sessions of an opencode database to read (default: every top-level session). */
  readonly session?: SessionPick
}

export type RecordingFormat =
  | 'ctxgate'
  | 'claude-stream-json'
  | 'claude-session'
  | 'openhands'
  | 'mini-swe-agent'
  | 'openai-messages'
  | 'text-trajectory'
  | 'codex-rollout'
  | 'codex-exec-json'
  | 'opencode-export'
  | 'opencode-db'
  | 'gemini-session'

type Loaded = { format: RecordingFormat; conversations: Conversation[] }

/** Like loadRecording, and also reads an opencode SQLite database (which needs an async WebAssembly start). */
export async function loadRecordingFile(path: string, options: LoadOptions): Promise<Loaded> {
  const bytes = readBytes(path)
  if (!isSqliteFile(bytes)) return checked(parseRecording(textOf(bytes, path), path, options), path)
  const { sessions, notes } = await readOpencodeDatabase(path, options.session ?? 'all')
  const conversations = sessions.map((session) => {
    const conversation = importOpencodeSession(session, path, options)
    return { ...conversation, notes: [...conversation.notes, ...notes] }
  })
  return checked({ format: 'opencode-db', conversations }, path)
}

/** Reads one recording, telling its format from its content; a file may hold several runs. */
export function loadRecording(path: string, options: LoadOptions): Loaded {
  const bytes = readBytes(path)
  if (isSqliteFile(bytes))
    throw new ImportError(path, 'an SQLite database: read it with loadRecordingFile (ctxgate replay does)')
  return checked(parseRecording(textOf(bytes, path), path, options), path)
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (error) {
    throw new ImportError(path, `cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/** Zstandard frames start with 28 B5 2F FD (RFC 8878 §3.1.1); Codex may compress old rollouts so. */
function textOf(bytes: Buffer, path: string): string {
  if (bytes.length < 4 || bytes.readUInt32LE(0) !== 0xfd2fb528) return bytes.toString('utf8')
  try {
    return Buffer.from(decompress(bytes)).toString('utf8')
  } catch (error) {
    throw new ImportError(path, `not a readable zstd file (${error instanceof Error ? error.message : String(error)})`)
  }
}

/** A recording with no request in it would print a table of zeros: say so instead. */
function checked(loaded: Loaded, path: string): Loaded {
  const requests = loaded.conversations.some((conversation) =>
    conversation.segments.some((messages) =>
      messages.some((message, index) => index > 0 && message.role === 'assistant'),
    ),
  )
  if (!requests)
    throw new ImportError(
      path,
      `read as ${loaded.format}, but it holds no model request to replay (no reply after a prompt)`,
    )
  return loaded
}

function parseRecording(text: string, path: string, options: LoadOptions): Loaded {
  const whole = tryParse(text)
  if (whole !== undefined) {
    if (looksLikeOpencodeExport(whole))
      return {
        format: 'opencode-export',
        conversations: [importOpencodeSession(whole as OpencodeSession, path, options)],
      }
    if (looksLikeMiniSweAgent(whole))
      return { format: 'mini-swe-agent', conversations: [importMiniSweAgent(whole as Record<string, unknown>, path)] }
    if (Array.isArray(whole))
      return {
        format: whole.some(hasToolCalls) ? 'openai-messages' : 'text-trajectory',
        conversations: [fromMessageList(whole as Record<string, unknown>[], path)],
      }
    if (text.trimStart().startsWith('{') && text.trim().includes('\n')) throw unrecognised(path)
  }
  const { records: lines, skipped } = parseJsonLines(text, path)
  const first = lines[0]
  if (first === undefined) throw new ImportError(path, 'the file is empty')
  const loaded = importLines(lines, path, options)
  if (skipped === undefined) return loaded
  const note = `line ${skipped} was cut short (the recording was still being written?) and was skipped`
  return {
    ...loaded,
    conversations: loaded.conversations.map((conversation) => ({
      ...conversation,
      notes: [...conversation.notes, note],
    })),
  }
}

/**
 * One JSON value per line. Only the last line may fail to parse: a recording copied while its
 * agent was still writing ends mid-line, and everything before it is still good.
 */
function parseJsonLines(text: string, path: string): { records: unknown[]; skipped?: number } {
  const numbered = text
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => line.trim() !== '')
  const records: unknown[] = []
  for (const [position, { line, number }] of numbered.entries()) {
    const parsed = tryParse(line)
    if (parsed !== undefined) records.push(parsed)
    else if (position === numbered.length - 1 && position > 0 && looksCutShort(line, text))
      return { records, skipped: number }
    else throw new ImportError(path, `line ${number} is not JSON; expected JSON Lines or one JSON document`)
  }
  return { records }
}

/** A JSON value that stops mid-way (no closing newline, or an opening brace never closed). */
function looksCutShort(line: string, text: string): boolean {
  return !text.endsWith('\n') || /^\s*[[{]/.test(line)
}

function importLines(lines: unknown[], path: string, options: LoadOptions): Loaded {
  const first = lines[0]
  const records = lines as Record<string, unknown>[]
  if (looksLikeCodexRollout(first))
    return { format: 'codex-rollout', conversations: [importCodexRollout(records, path, options)] }
  if (looksLikeCodexExecJson(first))
    return { format: 'codex-exec-json', conversations: [importCodexExecJson(records, path, options)] }
  if (looksLikeGeminiSession(first))
    return { format: 'gemini-session', conversations: [importGeminiSession(records, path)] }
  if (looksLikeCtxgateJsonl(first)) return { format: 'ctxgate', conversations: importCtxgateJsonl(lines, path) }
  if (looksLikeOpenHands(first))
    return {
      format: 'openhands',
      conversations: lines.map((run, index) =>
        importOpenHandsRun(run as Record<string, unknown>, `${path}#${index + 1}`),
      ),
    }
  if (looksLikeClaudeStreamJson(first))
    return {
      format: 'claude-stream-json',
      conversations: [importClaudeStreamJson(lines as Record<string, unknown>[], path, options)],
    }
  if (looksLikeClaudeSession(first, lines))
    return {
      format: 'claude-session',
      conversations: [importClaudeSession(lines as Record<string, unknown>[], path, options)],
    }
  throw unrecognised(path)
}

function unrecognised(path: string): ImportError {
  return new ImportError(
    path,
    'unrecognised format: expected a Claude Code stream-json log or session file, a Codex rollout or exec --json log, an opencode export or opencode.db, a Gemini CLI session, an OpenHands output.jsonl, a mini-swe-agent .traj.json, an OpenAI message list, or ctxgate JSONL',
  )
}

function fromMessageList(messages: Record<string, unknown>[], path: string): Conversation {
  const meta = { id: basename(path), source: path, model: 'claude-sonnet-4-5' }
  if (!messages.some(hasToolCalls)) return importTextTrajectory(messages, { ...meta, notes: ['text-only trajectory'] })
  const names = new Set<string>()
  for (const message of messages)
    for (const call of (message['tool_calls'] as Record<string, Record<string, unknown>>[] | undefined) ?? [])
      names.add(String(call['function']?.['name'] ?? 'tool'))
  const tools: ToolDefinition[] = [...names].map((name) => ({
    name,
    description: `The ${name} tool.`,
    input_schema: { type: 'object' },
  }))
  return conversationFromOpenAI({
    ...meta,
    messages,
    tools,
    notes: ['OpenAI message list; tool schemas were not recorded, minimal ones used'],
  })
}

function hasToolCalls(message: unknown): boolean {
  return (
    typeof message === 'object' && message !== null && Array.isArray((message as Record<string, unknown>)['tool_calls'])
  )
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
