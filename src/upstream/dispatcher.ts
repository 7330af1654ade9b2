import { Agent, type Dispatcher } from 'undici'

/** One upstream's connection pool; the ids are the provider registry's (providers/upstream-ids.ts). */
export interface Upstream<Id extends string = string> {
  readonly id: Id
  readonly origin: string
  /** Path prefix from the configured URL, without a trailing slash ('' for none). */
  readonly basePath: string
  readonly dispatcher: Dispatcher
}

/** What the pools are made from: the config's `upstreams` and `upstream` sections (config/schema.ts). */
interface UpstreamSettings<Id extends string> {
  readonly upstreams: Readonly<Record<Id, { readonly url: string }>>
  readonly upstream: {
    readonly connectTimeoutMs: number
    readonly headersTimeoutMs: number
    readonly bodyTimeoutMs: number
    readonly keepAliveTimeoutMs: number
    readonly connectionsPerOrigin: number | null
  }
}

/** One keep-alive pool per upstream with explicit timeouts; nothing in src uses the global dispatcher. */
export function createUpstreams<Id extends string>(config: UpstreamSettings<Id>): Readonly<Record<Id, Upstream<Id>>> {
  const make = (id: Id): Upstream<Id> => {
    const url = new URL(config.upstreams[id].url)
    const options = config.upstream
    return {
      id,
      origin: url.origin,
      basePath: url.pathname.replace(/\/+$/, ''),
      dispatcher: new Agent({
        connect: { timeout: options.connectTimeoutMs },
        headersTimeout: options.headersTimeoutMs,
        bodyTimeout: options.bodyTimeoutMs,
        keepAliveTimeout: options.keepAliveTimeoutMs,
        ...(options.connectionsPerOrigin === null ? {} : { connections: options.connectionsPerOrigin }),
      }),
    }
  }
  const ids = Object.keys(config.upstreams) as Id[]
  return Object.fromEntries(ids.map((id) => [id, make(id)])) as Record<Id, Upstream<Id>>
}

export async function closeUpstreams(upstreams: Readonly<Record<string, Upstream>>): Promise<void> {
  await Promise.all(Object.values(upstreams).map((upstream) => upstream.dispatcher.close()))
}
