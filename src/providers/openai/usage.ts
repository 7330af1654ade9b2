import { tokenCount, type Usage, type UsageReader } from '../../model-call/usage.ts'
import { isJsonObject } from '../../util/json.ts'

/**
 * OpenAI counts cache reads (`cached_tokens`) and cache writes (`cache_write_tokens`, billed at 1.25×
 * input from GPT-5.6 on) inside prompt_tokens / input_tokens: split both out so kinds never overlap.
 */
export function openaiUsage(usage: Record<string, unknown>): Usage {
  const prompt = tokenCount(usage['prompt_tokens'] ?? usage['input_tokens'])
  const details = usage['prompt_tokens_details'] ?? usage['input_tokens_details']
  const cached = isJsonObject(details) ? tokenCount(details['cached_tokens']) : 0
  const written = isJsonObject(details) ? tokenCount(details['cache_write_tokens']) : 0
  return {
    inputTokens: Math.max(0, prompt - cached - written),
    cacheWrite5mTokens: written,
    cacheWrite1hTokens: 0,
    cacheReadTokens: cached,
    outputTokens: tokenCount(usage['completion_tokens'] ?? usage['output_tokens']),
  }
}

const usageObject = /"usage":\s*\{/

/** Chat streams carry usage on the final chunk (with include_usage); Responses streams on response.completed. */
export function createOpenAIUsageReader(): UsageReader {
  let last: Usage | undefined
  return {
    fromJson: (body) => (isJsonObject(body) && isJsonObject(body['usage']) ? openaiUsage(body['usage']) : undefined),
    onEvent(event) {
      // With include_usage every chunk carries "usage":null: parse only the one that has numbers.
      if (event.data === '[DONE]' || !usageObject.test(event.data)) return
      const data = JSON.parse(event.data) as unknown
      if (!isJsonObject(data)) return
      if (isJsonObject(data['usage'])) last = openaiUsage(data['usage'])
      else if (isJsonObject(data['response']) && isJsonObject(data['response']['usage']))
        last = openaiUsage(data['response']['usage'])
    },
    result: () => last,
    complete: () => last !== undefined,
  }
}
