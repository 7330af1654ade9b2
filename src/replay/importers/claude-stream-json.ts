import { existsSync, readFileSync } from 'node:fs'
import {
  appendMessage,
  textBlock,
  type Block,
  type Conversation,
  type Message,
  type RecordedUsage,
} from '../conversation.ts'
import { ImportError } from './import-error.ts'
import { attachmentNote } from './attachment-note.ts'
import { isSyntheticApiError, syntheticErrorNote } from './synthetic-error.ts'
import { standInSystemPrompt, standInTools } from './stand-ins.ts'

type Line = Record<string, unknown>

export interface ClaudeImportOptions {
  /** Keep the history a compaction replaced, and drop its summary (what the agent would have sent). */
  readonly uncompacted: boolean
  /** The first user message; found beside the log as NAME.prompt.txt when not given. */
  readonly promptFile?: string
}

export function looksLikeClaudeStreamJson(first: unknown): boolean {
  const line = first as Line
  return (
    typeof line === 'object' &&
    line !== null &&
    'session_id' in line &&
    (line['type'] === 'system' || line['type'] === 'assistant' || line['type'] === 'user')
  )
}

/** Claude Code `--output-format stream-json`: one JSON object per line, replies split over lines by content block. */
export function importClaudeStreamJson(
  lines: readonly Line[],
  source: string,
  options: ClaudeImportOptions,
): Conversation {
  const init = lines.find((line) => line['type'] === 'system' && line['subtype'] === 'init')
  const toolNames = Array.isArray(init?.['tools']) ? (init['tools'] as string[]) : []
  const prompt = readPrompt(source, options)
  const notes: string[] = [...attachmentNote(prompt)]
  const walked = walkLines(lines, prompt, options.uncompacted)
  const model = walked.model ?? (typeof init?.['model'] === 'string' ? init['model'] : 'claude-sonnet-4-5')
  if (walked.compactions > 0)
    notes.push(
      `${walked.compactions} compaction(s) ${options.uncompacted ? 'undone: history kept, summary dropped' : 'followed as recorded'}`,
    )
  if (walked.retried > 0) notes.push(`${walked.retried} retried response(s): kept the later one`)
  if (walked.synthetic > 0) notes.push(syntheticErrorNote(walked.synthetic))
  notes.push('system prompt and tool schemas are stand-ins (the log has tool names only)')
  const result = lines.findLast((line) => line['type'] === 'result')
  if (result) {
    const recorded = recordedUsageOf(result)
    notes.push(
      `recorded by the agent itself: input ${recorded.inputTokens ?? '?'}, cache write ${recorded.cacheWriteTokens ?? '?'}, cache read ${recorded.cacheReadTokens ?? '?'}, output ${recorded.outputTokens ?? '?'}${recorded.costUsd === undefined ? '' : `, $${recorded.costUsd.toFixed(2)}`}`,
    )
  }
  return {
    id: String(init?.['session_id'] ?? source),
    source,
    model,
    system: standInSystemPrompt('Claude Code'),
    tools: standInTools(toolNames),
    segments: walked.segments.filter((segment) => segment.length > 0),
    notes,
    ...(result ? { recordedUsage: recordedUsageOf(result) } : {}),
  }
}

/** The first user message, which a stream-json log does not hold. */
function readPrompt(source: string, options: ClaudeImportOptions): string {
  const promptPath = options.promptFile ?? promptBeside(source)
  if (!promptPath || !existsSync(promptPath))
    throw new ImportError(
      source,
      'the first user message is not in a stream-json log: pass its prompt file with --prompt (looked for NAME.prompt.txt beside the log)',
    )
  return readFileSync(promptPath, 'utf8')
}

interface WalkedLines {
  readonly segments: Message[][]
  /** The last model an assistant line named. */
  readonly model: string | undefined
  readonly compactions: number
  readonly retried: number
  readonly synthetic: number
}

/** The log's messages, one segment per compaction followed (or one, compactions undone). */
function walkLines(lines: readonly Line[], prompt: string, uncompacted: boolean): WalkedLines {
  const segments: Message[][] = [[{ role: 'user', content: [textBlock(prompt)] }]]
  let messages = segments[0] as Message[]
  let pendingAssistant: { id: string; content: Block[] } | undefined
  let model: string | undefined
  let compactions = 0
  let dropNextSummary = false
  let retried = 0
  let synthetic = 0
  const flushAssistant = (): void => {
    if (pendingAssistant) appendMessage(messages, { role: 'assistant', content: pendingAssistant.content })
    pendingAssistant = undefined
  }
  for (const line of lines) {
    if (line['parent_tool_use_id']) continue // a sub-agent's own traffic
    if (isSyntheticApiError(line)) {
      synthetic++
      continue
    }
    if (line['type'] === 'system' && line['subtype'] === 'compact_boundary') {
      flushAssistant()
      compactions++
      if (uncompacted) dropNextSummary = true
      else segments.push((messages = []))
      continue
    }
    const message = line['message'] as Line | undefined
    if (!message) continue
    if (line['type'] === 'assistant') {
      const id = String(message['id'] ?? '')
      if (typeof message['model'] === 'string') model = message['model']
      if (pendingAssistant && pendingAssistant.id !== id) {
        // Two replies in a row with different ids: the first was abandoned and retried.
        retried++
        pendingAssistant = undefined
      }
      pendingAssistant ??= { id, content: [] }
      pendingAssistant.content.push(...((message['content'] as Block[] | undefined) ?? []))
      continue
    }
    if (line['type'] !== 'user') continue
    flushAssistant()
    if (dropNextSummary) {
      dropNextSummary = false
      continue
    }
    appendMessage(messages, { role: 'user', content: userContent(message) })
  }
  flushAssistant()
  return { segments, model, compactions, retried, synthetic }
}

function userContent(message: Line): Block[] {
  return typeof message['content'] === 'string'
    ? [textBlock(message['content'])]
    : ((message['content'] as Block[] | undefined) ?? [])
}

function promptBeside(logPath: string): string | undefined {
  const stem = logPath
    .replace(/\.jsonl$/, '')
    .replace(/\.agent_log_raw$/, '')
    .replace(/\.claude$/, '')
    .replace(/\.agent_log_raw$/, '')
  const candidate = `${stem}.prompt.txt`
  return existsSync(candidate) ? candidate : undefined
}

function recordedUsageOf(result: Line): RecordedUsage {
  const usage = (result['usage'] as Record<string, number> | undefined) ?? {}
  return {
    ...(usage['input_tokens'] !== undefined ? { inputTokens: usage['input_tokens'] } : {}),
    ...(usage['cache_read_input_tokens'] !== undefined ? { cacheReadTokens: usage['cache_read_input_tokens'] } : {}),
    ...(usage['cache_creation_input_tokens'] !== undefined
      ? { cacheWriteTokens: usage['cache_creation_input_tokens'] }
      : {}),
    ...(usage['output_tokens'] !== undefined ? { outputTokens: usage['output_tokens'] } : {}),
    ...(typeof result['total_cost_usd'] === 'number' ? { costUsd: result['total_cost_usd'] } : {}),
  }
}
