/**
 * The upstream APIs ctxgate forwards to: the one list of providers. The registry gives each its
 * provider, the config schema its `upstreams.<id>` section, and the upstream pool its connections.
 * It imports nothing, so config/ can read it without a folder loop.
 */
export const upstreamIds = ['anthropic', 'openai'] as const

export type UpstreamId = (typeof upstreamIds)[number]
