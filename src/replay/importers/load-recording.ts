import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import type { Conversation, ToolDefinition } from '../conversation.ts'
import { importClaudeSession, looksLikeClaudeSession } from './claude-session.ts'
import { importClaudeStreamJson, looksLikeClaudeStreamJson } from './claude-stream-json.ts'
import { importCtxgateJsonl, looksLikeCtxgateJsonl } from './ctxgate-jsonl.ts'
import { ImportError } from './import-error.ts'
import { importMiniSweAgent, importTextTrajectory, looksLikeMiniSweAgent } from './mini-swe-agent.ts'
import { importOpenHandsRun, looksLikeOpenHands } from './openhands.ts'
import { conversationFromOpenAI } from './openai-messages.ts'

export interface LoadOptions {
  /** Undo recorded compactions: keep the history, drop the summary. */
  readonly uncompacted: boolean
  /** Prompt file for a Claude Code stream-json log (default: NAME.prompt.txt beside it). */
  readonly promptFile?: string
}

export type RecordingFormat =
  | 'ctxgate'
  | 'claude-stream-json'
  | 'claude-session'
  | 'openhands'
  | 'mini-swe-agent'
  | 'openai-messages'
  | 'text-trajectory'

/** Reads one recording, telling its format from its content; a file may hold several runs. */
export function loadRecording(
  path: string,
  options: LoadOptions,
): { format: RecordingFormat; conversations: Conversation[] } {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ImportError(path, `cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  const whole = tryParse(text)
  if (whole !== undefined) {
    if (looksLikeMiniSweAgent(whole))
      return { format: 'mini-swe-agent', conversations: [importMiniSweAgent(whole as Record<string, unknown>, path)] }
    if (Array.isArray(whole))
      return {
        format: whole.some(hasToolCalls) ? 'openai-messages' : 'text-trajectory',
        conversations: [fromMessageList(whole as Record<string, unknown>[], path)],
      }
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

function importLines(
  lines: unknown[],
  path: string,
  options: LoadOptions,
): { format: RecordingFormat; conversations: Conversation[] } {
  const first = lines[0]
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
  throw new ImportError(
    path,
    'unrecognised format: expected a Claude Code stream-json log or session file, an OpenHands output.jsonl, a mini-swe-agent .traj.json, an OpenAI message list, or ctxgate JSONL',
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
