import type { IncomingHttpHeaders } from 'node:http'
import type { AnsweredRequest, UsageReader } from '../model-call/usage.ts'
import type { ChunkFilter } from '../stream/chunk-filter.ts'
import type { UpstreamId } from './upstream-ids.ts'
import type { ChatAdapter } from './adapter-contract.ts'
import type { ErrorShape } from './error-shape.ts'
import type { LengthRefusalParser, StreamRefusalReader } from './length-refusal.ts'

/** The wire formats ctxgate reads and may rewrite; every other call is forwarded untouched. */
export type WireFormat = 'anthropic-messages' | 'anthropic-count-tokens' | 'openai-chat' | 'openai-responses'

/** One upstream API: where its calls go, how it words ctxgate's own errors, which headers combine. */
export interface Provider {
  readonly upstream: UpstreamId
  readonly errorShape: ErrorShape
  /** The response header carrying the upstream's own id of the request (for the log line). */
  readonly requestIdHeader: string
  /** The path to request upstream: the configured base path, then the client's request target. */
  upstreamPath(basePath: string, requestTarget: string): string
  /** Whether a call no wire format claims (models list, files…) belongs to this upstream. */
  claimsPassthrough(path: string, headers: IncomingHttpHeaders): boolean
  /** Headers ctxgate combines with the client's value instead of replacing it: (client's, ctxgate's) → sent. */
  readonly headerMerges?: Readonly<Record<string, (client: string, added: string) => string>>
  /** The upstream can say why a request missed its prompt cache, when the client asks it to. */
  readonly diagnosesCacheMisses?: boolean
  /** Kinds of edit the upstream itself makes to a prompt and reports in its usage (its context editing). */
  readonly serverEditKinds?: readonly string[]
  /** The status this upstream answers when it is overloaded: retried like a 5xx, counted under its own retry reason. */
  readonly overloadStatus?: number
  /** The official SDKs' user-agent prefixes and the client name each means (for the live page's client column). */
  readonly sdkClients?: readonly (readonly [RegExp, string])[]
}

/** What ctxgate needs to rewrite a format's requests and read its answers. */
export interface ChatFormat {
  readonly adapter: ChatAdapter
  /** A reader for one answer; given the request when ctxgate could parse it. */
  readonly usage: (request?: AnsweredRequest) => UsageReader
  /** How this API itself begins a refusal for length, so ctxgate's own reads the same to a client. */
  readonly tooLongWording: (promptTokens: number, limit: number) => string
}

/** One wire format: the paths clients send it to, its upstream, and how ctxgate reads it. */
export interface WireFormatDefinition {
  readonly name: WireFormat
  readonly provider: Provider
  readonly paths: readonly string[]
  /** Present when ctxgate may rewrite this format's requests. */
  readonly chat?: ChatFormat
  /** Reads a 400 body: whether (and by how much) the prompt was refused for its length. */
  readonly lengthRefusal?: LengthRefusalParser
  /** Reads a length refusal sent inside a 200 stream (the Responses API's `error` / `response.failed`). */
  readonly streamRefusal?: StreamRefusalReader
  /** Takes back out of a stream the usage ctxgate asked for and the client did not. */
  readonly hideRequestedUsage?: () => ChunkFilter
  /** Clients may also speak this format over a WebSocket on its paths, one response per message. */
  readonly webSocket?: boolean
}

/** The wire format spoken over a WebSocket: rewritable, with its in-stream refusals read. */
export type SocketFormat = WireFormatDefinition & {
  readonly chat: ChatFormat
  readonly streamRefusal: StreamRefusalReader
}
