import type { Provider, WireFormatDefinition } from '../provider-contract.ts'
import { openaiChatAdapter } from './chat-adapter.ts'
import { openaiErrorShape } from './error-shape.ts'
import { createUsageChunkFilter } from './hide-usage-chunk.ts'
import {
  chatTooLongWording,
  readOpenAILengthRefusal,
  readResponsesEventRefusal,
  responsesPreamble,
  responsesTooLongWording,
} from './length-refusal.ts'
import { openaiResponsesAdapter } from './responses-adapter.ts'
import { createOpenAIUsageReader } from './usage.ts'

const versioned = /^\/v1(\/|\?|$)/

export const openaiProvider: Provider = {
  upstream: 'openai',
  errorShape: openaiErrorShape,
  // https://platform.openai.com/docs/api-reference/debugging-requests
  requestIdHeader: 'x-request-id',
  // Clients send `/v1/...` when their base URL ends in /v1 and bare paths when it doesn't.
  upstreamPath: (basePath, requestTarget) =>
    versioned.test(requestTarget) ? `${basePath}${requestTarget}` : `${basePath}/v1${requestTarget}`,
  // OpenAI-compatible clients send every other path.
  claimsPassthrough: () => true,
  sdkClients: [
    [/^openai\/js$/i, 'OpenAI SDK (JS)'],
    [/^openai\/python$/i, 'OpenAI SDK (Python)'],
  ],
}

const chat = { adapter: openaiChatAdapter, usage: createOpenAIUsageReader, tooLongWording: chatTooLongWording }

export const openaiFormats: readonly WireFormatDefinition[] = [
  {
    name: 'openai-chat',
    provider: openaiProvider,
    paths: ['/v1/chat/completions', '/chat/completions'],
    chat,
    lengthRefusal: readOpenAILengthRefusal,
    hideRequestedUsage: createUsageChunkFilter,
  },
  {
    name: 'openai-responses',
    provider: openaiProvider,
    paths: ['/v1/responses', '/responses'],
    chat: { ...chat, adapter: openaiResponsesAdapter, tooLongWording: responsesTooLongWording },
    lengthRefusal: readOpenAILengthRefusal,
    streamRefusal: { preamble: responsesPreamble, read: readResponsesEventRefusal },
    webSocket: true,
  },
]
