import type { IncomingHttpHeaders } from 'node:http'
import type { UpstreamId } from '../upstream/dispatcher.ts'
import type { ErrorShape } from './error-shape.ts'
import { anthropicErrorShape } from './anthropic/error-shape.ts'
import { openaiErrorShape } from './openai/error-shape.ts'

/** The wire formats ctxgate reads and may rewrite; every other call is forwarded untouched. */
export type WireFormat = 'anthropic-messages' | 'anthropic-count-tokens' | 'openai-chat' | 'openai-responses'

export interface ModelRoute {
  readonly path: string
  readonly format: WireFormat
  readonly upstream: UpstreamId
}

/** OpenAI clients send `/v1/...` when their base URL ends in /v1 and bare paths when it doesn't (model-apis §6.2). */
export const modelRoutes: readonly ModelRoute[] = [
  { path: '/v1/messages', format: 'anthropic-messages', upstream: 'anthropic' },
  { path: '/v1/messages/count_tokens', format: 'anthropic-count-tokens', upstream: 'anthropic' },
  { path: '/v1/chat/completions', format: 'openai-chat', upstream: 'openai' },
  { path: '/chat/completions', format: 'openai-chat', upstream: 'openai' },
  { path: '/v1/responses', format: 'openai-responses', upstream: 'openai' },
  { path: '/responses', format: 'openai-responses', upstream: 'openai' },
]

export const errorShapes: Readonly<Record<UpstreamId, ErrorShape>> = {
  anthropic: anthropicErrorShape,
  openai: openaiErrorShape,
}

/**
 * Which upstream an unrouted call belongs to. The Anthropic SDKs always send `anthropic-version`;
 * paths both APIs share (`/v1/models`, `/v1/files`) are told apart by it.
 */
export function upstreamForPassthrough(path: string, headers: IncomingHttpHeaders): UpstreamId {
  if (headers['anthropic-version'] !== undefined || headers['x-api-key'] !== undefined) return 'anthropic'
  if (path.startsWith('/v1/messages') || path.startsWith('/v1/complete')) return 'anthropic'
  return 'openai'
}

/** The path to request upstream: the configured prefix, then the client's path, with /v1 added for bare OpenAI paths. */
export function upstreamPath(upstream: UpstreamId, basePath: string, requestUrl: string): string {
  if (upstream === 'openai' && !/^\/v1(\/|\?|$)/.test(requestUrl)) return `${basePath}/v1${requestUrl}`
  return `${basePath}${requestUrl}`
}
