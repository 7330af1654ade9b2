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

/** The first record of a Gemini CLI session file: `{sessionId, projectHash, startTime, …}`. */
export function looksLikeGeminiSession(first: unknown): boolean {
  const record = first as Json | null
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record['sessionId'] === 'string' &&
    typeof record['projectHash'] === 'string'
  )
}

/**
 * Replays Gemini CLI's append-only log the way Gemini CLI loads it: a record with an `id` adds or
 * replaces that message, `$rewindTo` drops it and everything after, `$set.messages` replaces all.
 */
export function geminiMessages(records: readonly Json[]): { metadata: Json; messages: Json[]; rewinds: number } {
  let metadata: Json = {}
  const byId = new Map<string, Json>()
  let rewinds = 0
  for (const record of records) {
    if (typeof record['$rewindTo'] === 'string') {
      rewinds++
      const ids = [...byId.keys()]
      const at = ids.indexOf(record['$rewindTo'])
      if (at < 0) byId.clear()
      else for (const id of ids.slice(at)) byId.delete(id)
    } else if (typeof record['id'] === 'string') byId.set(record['id'], record)
    else if (typeof record['$set'] === 'object' && record['$set'] !== null) {
      const set = record['$set'] as Json
      if (Array.isArray(set['messages'])) {
        byId.clear()
        for (const message of set['messages'] as Json[])
          if (typeof message['id'] === 'string') byId.set(message['id'], message)
      }
      const { messages: _messages, ...rest } = set
      metadata = { ...metadata, ...rest }
    } else if (typeof record['sessionId'] === 'string') {
      const { messages, ...rest } = record
      metadata = { ...metadata, ...rest }
      for (const message of (messages as Json[] | undefined) ?? [])
        if (typeof message['id'] === 'string') byId.set(message['id'], message)
    }
  }
  return { metadata, messages: [...byId.values()], rewinds }
}

/**
 * A Gemini CLI session (~/.gemini/tmp/<project>/chats/session-*.jsonl): user messages, and gemini
 * messages whose `toolCalls[] {id, name, args, result}` hold each call and its result. Each gemini
 * message is one request; its `tokens` are what the API reported for it.
 */
export function importGeminiSession(records: readonly Json[], source: string): Conversation {
  const { metadata, messages: records2, rewinds } = geminiMessages(records)
  const messages: Message[] = []
  const usage: RecordedUsage[] = []
  let model = 'gemini-2.5-pro'
  for (const record of records2) {
    if (record['type'] === 'user') {
      const text = partsText(record['content'])
      if (text) appendMessage(messages, { role: 'user', content: [textBlock(text)] })
      continue
    }
    if (record['type'] !== 'gemini') continue
    if (typeof record['model'] === 'string') model = record['model']
    if (record['tokens']) usage.push(tokensOf(record['tokens'] as Json))
    const text = partsText(record['content'])
    const calls = (record['toolCalls'] as Json[] | undefined) ?? []
    const reply: Block[] = [
      ...(text ? [textBlock(text)] : []),
      ...calls.map((call): Block => ({
        type: 'tool_use',
        id: String(call['id']),
        name: String(call['name'] ?? 'tool'),
        input: call['args'] ?? {},
      })),
    ]
    appendMessage(messages, { role: 'assistant', content: reply.length > 0 ? reply : [textBlock('(empty reply)')] })
    const results: Block[] = calls
      .filter((call) => call['result'] !== undefined && call['result'] !== null)
      .map((call) => ({
        type: 'tool_result',
        tool_use_id: String(call['id']),
        content: resultText(call['result']),
        ...(call['status'] === 'error' ? { is_error: true } : {}),
      }))
    if (results.length > 0) appendMessage(messages, { role: 'user', content: results })
  }
  const paired = pairToolCalls(messages)
  const recorded = usage.length > 0 ? sumUsage(usage) : undefined
  const toolNames = new Set(
    paired.messages.flatMap((message) =>
      message.content.flatMap((block) => (block.type === 'tool_use' ? [block.name] : [])),
    ),
  )
  const notes = [
    'system prompt and tool schemas are stand-ins (the session file keeps neither)',
    ...(rewinds > 0 ? [`${rewinds} rewind(s) applied: the messages they undid are not replayed`] : []),
    ...(paired.dropped > 0 ? [`${paired.dropped} unfinished tool call(s) dropped`] : []),
    ...(recorded ? [recordedUsageNote(recorded)] : []),
  ]
  return {
    id: String(metadata['sessionId'] ?? source),
    source,
    model,
    system: standInSystemPrompt('Gemini CLI'),
    tools: standInTools([...toolNames]),
    segments: paired.messages.length > 0 ? [paired.messages] : [],
    notes,
    ...(recorded ? { recordedUsage: recorded } : {}),
  }
}

/** Gemini's usage: `input` counts the whole prompt, cached tokens included; thoughts are output. */
function tokensOf(tokens: Json): RecordedUsage {
  const input = Number(tokens['input'] ?? 0)
  const cached = Number(tokens['cached'] ?? 0)
  return {
    inputTokens: input - cached,
    cacheReadTokens: cached,
    outputTokens: Number(tokens['output'] ?? 0) + Number(tokens['thoughts'] ?? 0),
  }
}

function partsText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as Json[])
    .map((part) => (typeof part['text'] === 'string' && part['thought'] !== true ? part['text'] : ''))
    .join('')
}

/** A result is a string, a list of parts (functionResponse parts, text), or one functionResponse. */
function resultText(result: unknown): string {
  if (typeof result === 'string') return result
  const parts = Array.isArray(result) ? (result as Json[]) : [result as Json]
  return parts
    .map((part) => {
      if (typeof part['text'] === 'string') return part['text']
      const response = (part['functionResponse'] as Json | undefined)?.['response'] as Json | undefined
      if (response && typeof response['output'] === 'string') return response['output']
      return JSON.stringify(response ?? part)
    })
    .join('\n')
}
