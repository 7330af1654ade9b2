import type { Usage, UsageReader } from '../../model-call/usage.ts'
import { isJsonObject, numberOrZero } from '../../util/json.ts'

/** Anthropic usage: input excludes cache reads and writes; the 5m/1h split sits in `cache_creation` (model-apis §2.4). */
export function anthropicUsage(usage: Record<string, unknown>): Usage {
  const written = numberOrZero(usage['cache_creation_input_tokens'])
  const breakdown = isJsonObject(usage['cache_creation']) ? usage['cache_creation'] : undefined
  const oneHour = numberOrZero(breakdown?.['ephemeral_1h_input_tokens'])
  return {
    inputTokens: numberOrZero(usage['input_tokens']),
    cacheWrite5mTokens: breakdown ? Math.max(0, written - oneHour) : written,
    cacheWrite1hTokens: oneHour,
    cacheReadTokens: numberOrZero(usage['cache_read_input_tokens']),
    outputTokens: numberOrZero(usage['output_tokens']),
  }
}

/**
 * Streams: input side from message_start; a later message_delta's non-null values overwrite it
 * (they are cumulative totals, never added); output from the last delta (model-apis §4.4).
 */
export function createAnthropicUsageReader(): UsageReader {
  let merged: Record<string, unknown> | undefined
  let final = false
  const merge = (usage: unknown): void => {
    if (!isJsonObject(usage)) return
    merged ??= {}
    for (const [key, value] of Object.entries(usage)) if (value !== null && value !== undefined) merged[key] = value
  }
  return {
    fromJson: (body) => (isJsonObject(body) && isJsonObject(body['usage']) ? anthropicUsage(body['usage']) : undefined),
    onEvent(event) {
      if (event.event !== 'message_start' && event.event !== 'message_delta') return
      const data = JSON.parse(event.data) as unknown
      if (!isJsonObject(data)) return
      merge(event.event === 'message_start' && isJsonObject(data['message']) ? data['message']['usage'] : data['usage'])
      if (event.event === 'message_delta' && isJsonObject(data['usage'])) final = true
    },
    complete: () => final,
    result: () => (merged ? anthropicUsage(merged) : undefined),
  }
}
