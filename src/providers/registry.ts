import type { IncomingHttpHeaders } from 'node:http'
import type { ExactCounters } from '../rewrite/estimate.ts'
import type { Upstream } from '../upstream/dispatcher.ts'
import type { UpstreamId } from './upstream-ids.ts'
import { anthropicFormats, anthropicProvider } from './anthropic/provider.ts'
import { openaiFormats, openaiProvider } from './openai/provider.ts'
import { openaiExactCounters } from './openai/tokenizer/exact-counters.ts'
import type { ChatFormat, Provider, SocketFormat, WireFormat, WireFormatDefinition } from './provider-contract.ts'

/**
 * Every upstream and wire format ctxgate knows, in one place: the rest of the proxy looks them up
 * here and never names a provider itself.
 */
/** Each upstream's connection pool, by the registry's ids. */
export type Upstreams = Readonly<Record<UpstreamId, Upstream<UpstreamId>>>

export const providers: Readonly<Record<UpstreamId, Provider>> = {
  anthropic: anthropicProvider,
  openai: openaiProvider,
}

/** Exact token counters for the models whose vocabulary is public, loaded on first use. */
export const exactCounters: ExactCounters = openaiExactCounters

export const wireFormats: readonly WireFormatDefinition[] = [...anthropicFormats, ...openaiFormats]

/** Asked in this order which upstream an unrouted call belongs to; the last one takes the rest. */
const passthroughOrder: readonly Provider[] = [anthropicProvider, openaiProvider]

export interface ModelRoute {
  readonly path: string
  readonly format: WireFormatDefinition
}

/** One POST route per path of each wire format. */
export const modelRoutes: readonly ModelRoute[] = wireFormats.flatMap((format) =>
  format.paths.map((path) => ({ path, format })),
)

const byName = new Map(wireFormats.map((format) => [format.name, format]))

/** The adapter and usage reader of a format ctxgate may rewrite; undefined for the others. */
export function chatFormat(name: WireFormat): ChatFormat | undefined {
  return byName.get(name)?.chat
}

/** The wire format clients may also speak over a WebSocket (the Responses API). */
export const socketFormat: SocketFormat = socketFormatOf(wireFormats)

/** Route label of model calls made over the socket (HTTP ones are the format's name). */
export const socketRoute = `${socketFormat.name}-ws`

function socketFormatOf(formats: readonly WireFormatDefinition[]): SocketFormat {
  const format = formats.find((candidate) => candidate.webSocket === true)
  if (!format?.chat || !format.streamRefusal) throw new Error('the provider registry lists no WebSocket wire format')
  return format as SocketFormat
}

/** Which upstream a call no wire format claims goes to. */
export function providerForPassthrough(path: string, headers: IncomingHttpHeaders): Provider {
  return passthroughOrder.find((provider) => provider.claimsPassthrough(path, headers)) ?? openaiProvider
}
