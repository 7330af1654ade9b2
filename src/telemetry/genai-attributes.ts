import type { Attributes } from '@opentelemetry/api'
import type { CallFacts } from './exported-call.ts'
import { promptTokensOf } from '../model-call/usage.ts'

/** The upstream's host and port, as the span's `server.*` attributes name it. */
export interface ServerAddress {
  readonly address: string
  readonly port: number
}

/** Every model call ctxgate relays is a chat turn (Messages, Chat Completions, Responses). */
export const operationName = 'chat'

/**
 * The GenAI semantic conventions' inference span attributes
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/). Input tokens include the cached
 * ones: for Anthropic input + cache read + cache creation. Message content is never read here.
 */
export function genAiAttributes(
  record: CallFacts,
  server: ServerAddress | undefined,
  options: { readonly latestOnly: boolean },
): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': operationName,
    'gen_ai.provider.name': record.provider,
  }
  // v1.36 and earlier named the provider gen_ai.system; OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental drops it.
  if (!options.latestOnly) attributes['gen_ai.system'] = record.provider
  const { accounting, usage } = record
  if (accounting?.model) attributes['gen_ai.request.model'] = accounting.model
  if (accounting?.sessionId) {
    attributes['gen_ai.conversation.id'] = accounting.sessionId
    // Langfuse and Phoenix group traces into sessions by this attribute.
    attributes['session.id'] = accounting.sessionId
  }
  if (record.streamed !== undefined) attributes['gen_ai.request.stream'] = record.streamed
  const errorType = errorTypeOf(record)
  if (errorType) attributes['error.type'] = errorType
  const response = record.response
  if (response?.id) attributes['gen_ai.response.id'] = response.id
  if (response?.model) attributes['gen_ai.response.model'] = response.model
  if (response?.finishReasons) attributes['gen_ai.response.finish_reasons'] = [...response.finishReasons]
  if (usage) {
    attributes['gen_ai.usage.input_tokens'] = promptTokensOf(usage)
    attributes['gen_ai.usage.output_tokens'] = usage.outputTokens
    attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cacheReadTokens
    attributes['gen_ai.usage.cache_creation.input_tokens'] = usage.cacheWrite5mTokens + usage.cacheWrite1hTokens
  }
  if (server) {
    attributes['server.address'] = server.address
    attributes['server.port'] = server.port
  }
  return attributes
}

/** `error.type`: the HTTP status for an error answer, else how the call failed; nothing for a success. */
export function errorTypeOf(record: CallFacts): string | undefined {
  if (record.status >= 400) return String(record.status)
  switch (record.outcome) {
    case 'upstream_unreachable':
    case 'upstream_failed':
    case 'internal_error':
    case 'client_closed':
      return record.outcome
    default:
      return record.status === 0 ? record.outcome : undefined
  }
}
