import { isRecord, number, type Usage, type UsageReader } from '../usage.ts'

/** OpenAI counts cached tokens inside prompt_tokens / input_tokens (model-apis §2.5, §7.4); split them out. */
export function openaiUsage(usage: Record<string, unknown>): Usage {
  const prompt = number(usage['prompt_tokens'] ?? usage['input_tokens'])
  const details = usage['prompt_tokens_details'] ?? usage['input_tokens_details']
  const cached = isRecord(details) ? number(details['cached_tokens']) : 0
  const written = isRecord(details) ? number(details['cache_write_tokens']) : 0
  return {
    inputTokens: Math.max(0, prompt - cached - written),
    cacheWrite5mTokens: written,
    cacheWrite1hTokens: 0,
    cacheReadTokens: cached,
    outputTokens: number(usage['completion_tokens'] ?? usage['output_tokens']),
  }
}

const usageObject = /"usage":\s*\{/

/** Chat streams carry usage on the final chunk (with include_usage); Responses streams on response.completed. */
export function createOpenAIUsageReader(): UsageReader {
  let last: Usage | undefined
  return {
    fromJson: (body) => (isRecord(body) && isRecord(body['usage']) ? openaiUsage(body['usage']) : undefined),
    onEvent(event) {
      // With include_usage every chunk carries "usage":null: parse only the one that has numbers.
      if (event.data === '[DONE]' || !usageObject.test(event.data)) return
      const data = JSON.parse(event.data) as unknown
      if (!isRecord(data)) return
      if (isRecord(data['usage'])) last = openaiUsage(data['usage'])
      else if (isRecord(data['response']) && isRecord(data['response']['usage']))
        last = openaiUsage(data['response']['usage'])
    },
    result: () => last,
    complete: () => last !== undefined,
  }
}
