import type { CacheDiagnosis } from '../../model-call/cache-diagnosis.ts'
import {
  boundedSum,
  tokenCount,
  type AnsweredRequest,
  type ResponseFacts,
  type ServerEdits,
  type TokenCounts,
  type Usage,
  type UsageReader,
} from '../../model-call/usage.ts'
import { isJsonObject, type Json } from '../../util/json.ts'
import { asksCacheDiagnosis, readCacheDiagnosis } from './cache-diagnosis.ts'

/** Anthropic counts: input excludes cache reads and writes; the 5m/1h split sits in `cache_creation`. */
function anthropicCounts(usage: Json): TokenCounts {
  const written = tokenCount(usage['cache_creation_input_tokens'])
  const breakdown = isJsonObject(usage['cache_creation']) ? usage['cache_creation'] : undefined
  const oneHour = tokenCount(breakdown?.['ephemeral_1h_input_tokens'])
  return {
    inputTokens: tokenCount(usage['input_tokens']),
    cacheWrite5mTokens: breakdown ? Math.max(0, written - oneHour) : written,
    cacheWrite1hTokens: oneHour,
    cacheReadTokens: tokenCount(usage['cache_read_input_tokens']),
    outputTokens: tokenCount(usage['output_tokens']),
  }
}

/** Compaction passes listed in `usage.iterations[]`, summed: the top-level counts leave them out. */
function compactionCounts(iterations: unknown): TokenCounts | undefined {
  if (!Array.isArray(iterations)) return undefined
  const passes = iterations.filter((entry): entry is Json => isJsonObject(entry) && entry['type'] === 'compaction')
  if (passes.length === 0) return undefined
  return passes.map(anthropicCounts).reduce((sum, next) => ({
    inputTokens: boundedSum(sum.inputTokens, next.inputTokens),
    cacheWrite5mTokens: boundedSum(sum.cacheWrite5mTokens, next.cacheWrite5mTokens),
    cacheWrite1hTokens: boundedSum(sum.cacheWrite1hTokens, next.cacheWrite1hTokens),
    cacheReadTokens: boundedSum(sum.cacheReadTokens, next.cacheReadTokens),
    outputTokens: boundedSum(sum.outputTokens, next.outputTokens),
  }))
}

/** `context_management.applied_edits`: what the server cleared before the model saw the prompt. */
export function serverEditsOf(contextManagement: unknown): ServerEdits | undefined {
  const applied = isJsonObject(contextManagement) ? contextManagement['applied_edits'] : undefined
  if (!Array.isArray(applied)) return undefined
  const edits = applied.filter(isJsonObject)
  const total = (field: string): number => edits.reduce((sum, edit) => boundedSum(sum, tokenCount(edit[field])), 0)
  return {
    clearedToolUses: total('cleared_tool_uses'),
    clearedThinkingTurns: total('cleared_thinking_turns'),
    clearedInputTokens: total('cleared_input_tokens'),
  }
}

/** One answer's usage; `contextManagement` is the answer's top-level (or final delta's) object. */
export function anthropicUsage(usage: Json, contextManagement?: unknown, cacheDiagnosis?: CacheDiagnosis): Usage {
  const compaction = compactionCounts(usage['iterations'])
  const serverEdits = serverEditsOf(contextManagement)
  return {
    ...anthropicCounts(usage),
    ...(compaction ? { compaction } : {}),
    ...(serverEdits ? { serverEdits } : {}),
    ...(cacheDiagnosis ? { cacheDiagnosis } : {}),
  }
}

/**
 * Streams: input side from message_start; a later message_delta's non-null values overwrite it
 * (they are cumulative totals, never added); output from the last delta. Applied edits arrive on
 * the final message_delta; the cache diagnosis (read only when the client asked for one) on
 * message_start's message.
 */
export function createAnthropicUsageReader(request?: AnsweredRequest): UsageReader {
  const diagnosed = asksCacheDiagnosis(request)
  let merged: Json | undefined
  let contextManagement: unknown
  let cacheDiagnosis: CacheDiagnosis | undefined
  let final = false
  let facts: ResponseFacts | undefined
  const merge = (usage: unknown): void => {
    if (!isJsonObject(usage)) return
    merged ??= {}
    for (const [key, value] of Object.entries(usage)) if (value !== null && value !== undefined) merged[key] = value
  }
  return {
    fromJson: (body) => {
      if (!isJsonObject(body)) return undefined
      facts = { ...messageFacts(body), ...stopReason(body['stop_reason']) }
      return isJsonObject(body['usage'])
        ? anthropicUsage(body['usage'], body['context_management'], diagnosed ? readCacheDiagnosis(body) : undefined)
        : undefined
    },
    onEvent(event) {
      if (event.event !== 'message_start' && event.event !== 'message_delta') return
      const data = JSON.parse(event.data) as unknown
      if (!isJsonObject(data)) return
      const started = event.event === 'message_start' && isJsonObject(data['message']) ? data['message'] : undefined
      if (started) facts = messageFacts(started)
      else if (isJsonObject(data['delta'])) facts = { ...facts, ...stopReason(data['delta']['stop_reason']) }
      if (started && diagnosed) cacheDiagnosis = readCacheDiagnosis(started)
      merge(started ? started['usage'] : data['usage'])
      if (isJsonObject(data['context_management'])) contextManagement = data['context_management']
      if (event.event === 'message_delta' && isJsonObject(data['usage'])) final = true
    },
    complete: () => final,
    result: () => (merged ? anthropicUsage(merged, contextManagement, cacheDiagnosis) : undefined),
    response: () => facts,
  }
}

/** A message's id and model (the body of a JSON answer, or message_start's message). */
function messageFacts(message: Json): ResponseFacts {
  const { id, model } = message
  return { ...(typeof id === 'string' ? { id } : {}), ...(typeof model === 'string' ? { model } : {}) }
}

function stopReason(reason: unknown): ResponseFacts {
  return typeof reason === 'string' ? { finishReasons: [reason] } : {}
}
