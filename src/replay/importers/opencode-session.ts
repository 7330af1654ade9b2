import {
  appendMessage,
  textBlock,
  type Block,
  type Conversation,
  type Message,
  type RecordedUsage,
} from '../conversation.ts'
import { recordedUsageNote, sumUsage } from './recorded-usage.ts'
import { standInSystemPrompt, standInTools } from './stand-ins.ts'
import { pairToolCalls } from './tool-pairing.ts'

type Json = Record<string, unknown>

/** One opencode message with its parts, as `opencode export` prints it and its database stores it. */
export interface OpencodeMessage {
  readonly info: Json
  readonly parts: readonly Json[]
}

export interface OpencodeSession {
  readonly info: Json
  readonly messages: readonly OpencodeMessage[]
}

/** `opencode export` prints `{info: session, messages: [{info, parts}]}`. */
export function looksLikeOpencodeExport(document: unknown): boolean {
  if (typeof document !== 'object' || document === null) return false
  const { info, messages } = document as Json
  return (
    typeof info === 'object' &&
    info !== null &&
    typeof (info as Json)['id'] === 'string' &&
    Array.isArray(messages) &&
    (messages as Json[]).every((message) => typeof message['info'] === 'object' && Array.isArray(message['parts']))
  )
}

/** What opencode sends in place of the history a compaction replaced (its compaction user turn). */
const compactionPrompt = 'What did we do so far?'

/**
 * An opencode session (1.2 and later): each assistant step (step-start … step-finish) is one
 * request; tool parts carry the call and its result. A user message with a `compaction` part,
 * answered by a summary, starts a new history; `uncompacted` keeps the old one instead.
 */
export function importOpencodeSession(
  session: OpencodeSession,
  source: string,
  options: { readonly uncompacted: boolean },
): Conversation {
  const segments: Message[][] = [[]]
  const steps: RecordedUsage[] = []
  let compactions = 0
  let skipSummary = false
  let model = 'claude-sonnet-4-5'
  for (const { info, parts } of session.messages) {
    const messages = segments.at(-1) as Message[]
    if (info['role'] === 'user') {
      if (parts.some((part) => part['type'] === 'compaction')) {
        compactions++
        if (options.uncompacted) skipSummary = true
        else segments.push([{ role: 'user', content: [textBlock(compactionPrompt)] }])
        continue
      }
      const content = parts.flatMap(userBlock)
      if (content.length > 0) appendMessage(messages, { role: 'user', content })
      continue
    }
    if (info['role'] !== 'assistant') continue
    if (typeof info['modelID'] === 'string') model = info['modelID']
    steps.push(...parts.filter((part) => part['type'] === 'step-finish').map(stepUsage))
    if (skipSummary && info['summary'] === true) {
      skipSummary = false
      continue
    }
    appendAssistantSteps(messages, parts)
  }
  const paired = segments.map((segment) => pairToolCalls(segment))
  const recorded = steps.length > 0 ? sumUsage(steps) : undefined
  const toolNames = new Set(
    paired.flatMap(({ messages }) =>
      messages.flatMap((message) =>
        message.content.flatMap((block) => (block.type === 'tool_use' ? [block.name] : [])),
      ),
    ),
  )
  const dropped = paired.reduce((sum, { dropped: count }) => sum + count, 0)
  const notes = [
    'system prompt and tool schemas are stand-ins (opencode keeps neither); its title request is not replayed',
    ...(compactions > 0
      ? [
          `${compactions} compaction(s) ${options.uncompacted ? 'undone: history kept, summary dropped' : 'followed as recorded'}`,
        ]
      : []),
    ...(dropped > 0 ? [`${dropped} unfinished tool call(s) dropped`] : []),
    ...(recorded ? [recordedUsageNote(recorded)] : []),
  ]
  return {
    id: String(session.info['id'] ?? source),
    source,
    model,
    system: standInSystemPrompt('opencode'),
    tools: standInTools([...toolNames]),
    segments: paired.map(({ messages }) => messages).filter((messages) => messages.length > 0),
    notes,
    ...(recorded ? { recordedUsage: recorded } : {}),
  }
}

function userBlock(part: Json): Block[] {
  if (part['type'] === 'text' && typeof part['text'] === 'string' && part['text'] !== '' && part['ignored'] !== true)
    return [textBlock(part['text'])]
  if (part['type'] === 'file') return [textBlock(`[attached file ${String(part['filename'] ?? part['url'] ?? '')}]`)]
  return []
}

/** Each step is one reply: its text and tool calls, then the tool results as the next user turn. */
function appendAssistantSteps(messages: Message[], parts: readonly Json[]): void {
  let reply: Block[] = []
  let results: Block[] = []
  const flush = (): void => {
    if (reply.length > 0) appendMessage(messages, { role: 'assistant', content: reply })
    if (results.length > 0) appendMessage(messages, { role: 'user', content: results })
    reply = []
    results = []
  }
  for (const part of parts) {
    if (part['type'] === 'step-start') flush()
    else if (part['type'] === 'text' && typeof part['text'] === 'string' && part['text'] !== '')
      reply.push(textBlock(part['text']))
    else if (part['type'] === 'tool') {
      const id = String(part['callID'] ?? part['id'])
      const state = (part['state'] as Json | undefined) ?? {}
      reply.push({ type: 'tool_use', id, name: String(part['tool'] ?? 'tool'), input: state['input'] ?? {} })
      if (state['status'] === 'completed')
        results.push({ type: 'tool_result', tool_use_id: id, content: String(state['output'] ?? '') })
      else if (state['status'] === 'error')
        results.push({ type: 'tool_result', tool_use_id: id, content: String(state['error'] ?? ''), is_error: true })
    }
  }
  flush()
}

function stepUsage(part: Json): RecordedUsage {
  const tokens = (part['tokens'] as Json | undefined) ?? {}
  const cache = (tokens['cache'] as Record<string, number> | undefined) ?? {}
  return {
    inputTokens: Number(tokens['input'] ?? 0),
    cacheReadTokens: cache['read'] ?? 0,
    cacheWriteTokens: cache['write'] ?? 0,
    outputTokens: Number(tokens['output'] ?? 0) + Number(tokens['reasoning'] ?? 0),
    ...(typeof part['cost'] === 'number' ? { costUsd: part['cost'] } : {}),
  }
}
