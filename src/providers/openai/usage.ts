import { tokenCount, type ResponseFacts, type Usage, type UsageReader } from '../../model-call/usage.ts'
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
/** Chat chunks name their finish reason once, on the last content chunk. */
const finishReason = /"finish_reason":\s*"/

/** Chat streams carry usage on the final chunk (with include_usage); Responses streams on response.completed. */
export function createOpenAIUsageReader(): UsageReader {
  let last: Usage | undefined
  let facts: ResponseFacts | undefined
  return {
    fromJson: (body) => {
      if (!isJsonObject(body)) return undefined
      facts = answerFacts(body, finishReasonsOf(body))
      return isJsonObject(body['usage']) ? openaiUsage(body['usage']) : undefined
    },
    onEvent(event) {
      // With include_usage every chunk carries "usage":null: parse only the ones that say something.
      if (event.data === '[DONE]') return
      const hasUsage = usageObject.test(event.data)
      if (!hasUsage && !finishReason.test(event.data)) return
      const data = JSON.parse(event.data) as unknown
      if (!isJsonObject(data)) return
      const reasons = finishReasonsOf(data)
      if (reasons) facts = { ...facts, ...answerFacts(data, reasons) }
      if (!hasUsage) return
      if (isJsonObject(data['usage'])) {
        last = openaiUsage(data['usage'])
        facts = {
          ...answerFacts(data, undefined),
          ...(facts?.finishReasons ? { finishReasons: facts.finishReasons } : {}),
        }
      } else if (isJsonObject(data['response']) && isJsonObject(data['response']['usage'])) {
        last = openaiUsage(data['response']['usage'])
        facts = answerFacts(data['response'], finishReasonsOf(data['response']))
      }
    },
    result: () => last,
    complete: () => last !== undefined,
    response: () => facts,
  }
}

/** Chat Completions: each choice's finish_reason; Responses: the response's status. */
function finishReasonsOf(body: Record<string, unknown>): readonly string[] | undefined {
  if (Array.isArray(body['choices'])) {
    const reasons = body['choices']
      .map((choice: unknown) => (isJsonObject(choice) ? choice['finish_reason'] : undefined))
      .filter((reason): reason is string => typeof reason === 'string')
    return reasons.length > 0 ? reasons : undefined
  }
  return typeof body['status'] === 'string' ? [body['status']] : undefined
}

function answerFacts(body: Record<string, unknown>, finishReasons: readonly string[] | undefined): ResponseFacts {
  const { id, model } = body
  return {
    ...(typeof id === 'string' ? { id } : {}),
    ...(typeof model === 'string' ? { model } : {}),
    ...(finishReasons ? { finishReasons } : {}),
  }
}
