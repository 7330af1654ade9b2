import type { Conversation, Message, RecordedUsage } from '../conversation.ts'
import { recordedUsageNote, sumUsage } from './recorded-usage.ts'
import { appendResponsesItem, emptyTally, tallyNotes } from './responses-items.ts'
import { standInTools } from './stand-ins.ts'
import { pairToolCalls } from './tool-pairing.ts'

type Json = Record<string, unknown>

/** A rollout line is `{timestamp, type, payload}`; the first is the session's `session_meta`. */
export function looksLikeCodexRollout(first: unknown): boolean {
  const line = first as Json | null
  return (
    typeof line === 'object' &&
    line !== null &&
    typeof line['timestamp'] === 'string' &&
    typeof line['payload'] === 'object' &&
    (line['type'] === 'session_meta' || line['type'] === 'response_item' || line['type'] === 'turn_context')
  )
}

/** The rollout's items, one list per compaction followed; the model its last turn named. */
function itemSegmentsOf(
  lines: readonly Json[],
  uncompacted: boolean,
): { itemSegments: Json[][]; model: string; compactions: number } {
  let items: Json[] = []
  const itemSegments: Json[][] = [items]
  let model = 'gpt-5-codex'
  let compactions = 0
  for (const line of lines) {
    const payload = (line['payload'] as Json | undefined) ?? {}
    if (line['type'] === 'turn_context' && typeof payload['model'] === 'string') model = payload['model']
    else if (line['type'] === 'response_item') items.push(payload)
    else if (line['type'] === 'compacted') {
      compactions++
      // The item just before the boundary is the summary the compaction request produced.
      if (uncompacted) {
        if (isAssistantMessage(items.at(-1))) items.pop()
        continue
      }
      const replacement = payload['replacement_history']
      items = Array.isArray(replacement)
        ? [...(replacement as Json[])]
        : [...leadingContext(itemSegments[0] ?? []), userText(String(payload['message'] ?? ''))]
      itemSegments.push(items)
    }
  }
  return { itemSegments, model, compactions }
}

/**
 * A Codex CLI rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl): the items Codex sent,
 * in order. A `compacted` line starts a new history from its `replacement_history`; with
 * `uncompacted` the history goes on and the compaction's own reply is dropped.
 */
export function importCodexRollout(
  lines: readonly Json[],
  source: string,
  options: { readonly uncompacted: boolean },
): Conversation {
  const meta = (lines.find((line) => line['type'] === 'session_meta')?.['payload'] as Json | undefined) ?? {}
  const { itemSegments, model, compactions } = itemSegmentsOf(lines, options.uncompacted)
  const tally = emptyTally()
  const segments: Message[][] = []
  let unpaired = 0
  for (const segmentItems of itemSegments) {
    const messages: Message[] = []
    for (const item of segmentItems) appendResponsesItem(messages, item, tally)
    const paired = pairToolCalls(messages)
    unpaired += paired.dropped
    if (paired.messages.length > 0) segments.push(paired.messages)
  }
  const recorded = recordedUsageOf(lines)
  const toolNames = new Set(
    segments
      .flat()
      .flatMap((message) => message.content.flatMap((block) => (block.type === 'tool_use' ? [block.name] : []))),
  )
  const notes = [
    'tool schemas are stand-ins (a rollout names its tools but does not keep their schemas)',
    ...(compactions > 0
      ? [
          `${compactions} compaction(s) ${options.uncompacted ? 'undone: history kept, each summary reply dropped' : 'followed as recorded (each compaction request is replayed without its prompt)'}`,
        ]
      : []),
    ...tallyNotes(tally),
    ...(unpaired > 0 ? [`${unpaired} tool call(s) or result(s) without a partner dropped`] : []),
    ...(recorded ? [recordedUsageNote(recorded)] : []),
  ]
  return {
    id: String(meta['id'] ?? source),
    source,
    model,
    system: instructionsOf(meta),
    tools: standInTools([...toolNames]),
    segments,
    notes,
    ...(recorded ? { recordedUsage: recorded } : {}),
  }
}

function isAssistantMessage(item: Json | undefined): boolean {
  return item?.['type'] === 'message' && item['role'] === 'assistant'
}

/** Older rollouts have no replacement history: Codex kept the initial context and the summary. */
function leadingContext(items: readonly Json[]): Json[] {
  const firstReply = items.findIndex((item) => item['type'] !== 'message' || item['role'] === 'assistant')
  return items.slice(0, firstReply < 0 ? items.length : firstReply)
}

function userText(text: string): Json {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] }
}

function instructionsOf(meta: Json): string {
  const base = meta['base_instructions'] ?? meta['instructions']
  if (typeof base === 'string') return base
  if (typeof base === 'object' && base !== null && typeof (base as Json)['text'] === 'string')
    return String((base as Json)['text'])
  return ''
}

/**
 * Usage per model request: `token_usage_record` lines where Codex writes them, else each rise
 * of the running total in `token_count` events (Codex repeats that event without a new request).
 */
function recordedUsageOf(lines: readonly Json[]): RecordedUsage | undefined {
  const records = lines
    .filter((line) => line['type'] === 'token_usage_record')
    .map((line) => usageOf((line['payload'] as Json | undefined)?.['usage']))
  if (records.length > 0) return sumUsage(records)
  const perRequest: RecordedUsage[] = []
  let lastTotal = 0
  for (const line of lines) {
    const payload = line['payload'] as Json | undefined
    if (line['type'] !== 'event_msg' || payload?.['type'] !== 'token_count') continue
    const info = payload['info'] as Json | null | undefined
    const total = Number((info?.['total_token_usage'] as Json | undefined)?.['total_tokens'] ?? 0)
    if (total > lastTotal) perRequest.push(usageOf(info?.['last_token_usage']))
    lastTotal = Math.max(lastTotal, total)
  }
  return perRequest.length > 0 ? sumUsage(perRequest) : undefined
}

/** OpenAI counts cached tokens inside `input_tokens`; the report's input is the uncached part. */
export function usageOf(raw: unknown): RecordedUsage {
  const usage = (raw as Record<string, number> | undefined) ?? {}
  const cached = usage['cached_input_tokens'] ?? 0
  const written = usage['cache_write_input_tokens'] ?? 0
  return {
    inputTokens: (usage['input_tokens'] ?? 0) - cached - written,
    cacheReadTokens: cached,
    cacheWriteTokens: written,
    outputTokens: usage['output_tokens'] ?? 0,
  }
}
