import type { Provider, WireFormatDefinition } from '../provider-contract.ts'
import { anthropicErrorShape } from './error-shape.ts'
import { anthropicTooLongWording, readAnthropicLengthRefusal } from './length-refusal.ts'
import { anthropicMessagesAdapter } from './messages-adapter.ts'
import { createAnthropicUsageReader } from './usage.ts'

/** `/messages…` without the version: a client whose base URL has no `/v1` (opencode's Anthropic provider). */
const unversionedMessages = /^\/messages(\/|\?|$)/

export const anthropicProvider: Provider = {
  upstream: 'anthropic',
  errorShape: anthropicErrorShape,
  // https://docs.anthropic.com/en/api/errors#request-id
  requestIdHeader: 'request-id',
  upstreamPath: (basePath, requestTarget) =>
    unversionedMessages.test(requestTarget) ? `${basePath}/v1${requestTarget}` : `${basePath}${requestTarget}`,
  // The Anthropic SDKs always send `anthropic-version`: paths both APIs share (`/v1/models`) are told apart by it.
  claimsPassthrough: (path, headers) =>
    headers['anthropic-version'] !== undefined ||
    headers['x-api-key'] !== undefined ||
    path.startsWith('/v1/messages') ||
    unversionedMessages.test(path) ||
    path.startsWith('/v1/complete'),
  // ctxgate's betas join the client's, never replace them.
  headerMerges: { 'anthropic-beta': mergeCommaList },
  // Context editing's own edits, reported in usage (https://platform.claude.com/docs/en/build-with-claude/context-editing).
  serverEditKinds: ['clear_tool_uses', 'clear_thinking'],
  // 529 overloaded_error (https://docs.anthropic.com/en/api/errors).
  overloadStatus: 529,
  sdkClients: [
    [/^anthropic\/js$/i, 'Anthropic SDK (JS)'],
    [/^anthropic\/python$/i, 'Anthropic SDK (Python)'],
  ],
  // The cache-diagnosis beta: read from answers only when the client itself opted in.
  diagnosesCacheMisses: true,
}

export const anthropicFormats: readonly WireFormatDefinition[] = [
  {
    name: 'anthropic-messages',
    provider: anthropicProvider,
    paths: ['/v1/messages', '/messages'],
    chat: {
      adapter: anthropicMessagesAdapter,
      usage: createAnthropicUsageReader,
      tooLongWording: anthropicTooLongWording,
    },
    lengthRefusal: readAnthropicLengthRefusal,
  },
  {
    name: 'anthropic-count-tokens',
    provider: anthropicProvider,
    paths: ['/v1/messages/count_tokens', '/messages/count_tokens'],
  },
]

/** Both lists, each entry once, in first-seen order. */
function mergeCommaList(client: string, added: string): string {
  const entries = [...client.split(','), ...added.split(',')].map((entry) => entry.trim()).filter(Boolean)
  return [...new Set(entries)].join(',')
}
