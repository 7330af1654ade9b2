import type { Attributes } from '@opentelemetry/api'
import type { CallFacts } from './exported-call.ts'
import { promptTokensOf } from '../model-call/usage.ts'

/**
 * OpenInference's LLM span attributes, which Arize Phoenix reads
 * (https://arize-ai.github.io/openinference/spec/semantic_conventions.html). No input or output
 * values: message content is never exported.
 */
export function openInferenceAttributes(record: CallFacts): Attributes {
  const attributes: Attributes = {
    'openinference.span.kind': 'LLM',
    'llm.system': record.provider,
    'llm.provider': record.provider,
  }
  const { accounting, usage } = record
  if (accounting?.model) attributes['llm.model_name'] = accounting.model
  if (accounting?.sessionId) attributes['session.id'] = accounting.sessionId
  if (usage) {
    const prompt = promptTokensOf(usage)
    attributes['llm.token_count.prompt'] = prompt
    attributes['llm.token_count.completion'] = usage.outputTokens
    attributes['llm.token_count.total'] = prompt + usage.outputTokens
    attributes['llm.token_count.prompt_details.cache_read'] = usage.cacheReadTokens
    attributes['llm.token_count.prompt_details.cache_write'] = usage.cacheWrite5mTokens + usage.cacheWrite1hTokens
  }
  return attributes
}
