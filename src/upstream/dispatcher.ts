import { Agent, type Dispatcher } from 'undici'
import type { Config } from '../config/schema.ts'

/** The upstreams configuration names, each with its own pool. */
export type UpstreamId = keyof Config['upstreams']

export interface Upstream {
  readonly id: UpstreamId
  readonly origin: string
  /** Path prefix from the configured URL, without a trailing slash ('' for none). */
  readonly basePath: string
  readonly dispatcher: Dispatcher
}

export type Upstreams = Readonly<Record<UpstreamId, Upstream>>

/** One keep-alive pool per upstream with explicit timeouts; nothing in src uses the global dispatcher. */
export function createUpstreams(config: Readonly<Config>): Upstreams {
  const make = (id: UpstreamId): Upstream => {
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
  const ids = Object.keys(config.upstreams) as UpstreamId[]
  return Object.fromEntries(ids.map((id) => [id, make(id)])) as Record<UpstreamId, Upstream>
}

export async function closeUpstreams(upstreams: Upstreams): Promise<void> {
  await Promise.all(Object.values(upstreams).map((upstream) => upstream.dispatcher.close()))
}
