import type { BatchReason } from '../rewrite/economy/types.ts'
import type { PrefixBreak } from '../rewrite/prefix-break.ts'
import { modelRoutes, providers } from '../providers/registry.ts'
import { cacheMissLabelPairs } from '../request/cache-miss-agreement.ts'
import { commonRetryReasons, overloadReason } from '../upstream/retry-policy.ts'
import type { ProxyMetrics } from './proxy-metrics.ts'

const prefixBreakCauses: readonly PrefixBreak[] = ['ctxgate_batch', 'client_edit', 'ttl_expired', 'model_changed']
const batchReasons: readonly BatchReason[] = ['over_budget', 'pays_back', 'cold_cache', 'restore']

const providerNames = Object.keys(providers)
const serverEditKinds = new Map<string, readonly string[]>(
  Object.values(providers).map((provider) => [provider.upstream, provider.serverEditKinds ?? []]),
)
const diagnosingProviders = Object.values(providers)
  .filter((provider) => provider.diagnosesCacheMisses === true)
  .map((provider) => provider.upstream)
const routeProviders = [
  ...new Set([
    ...modelRoutes.map((route) => `${route.format.name} ${route.format.provider.upstream}`),
    ...providerNames.map((name) => `passthrough ${name}`),
  ]),
].map((pair) => pair.split(' ') as [string, string])
// Every upstream's series include each provider's overload reason, so the set users scrape is the same for all.
const retryReasons = [
  ...commonRetryReasons,
  ...new Set(
    Object.values(providers)
      .flatMap((provider) => provider.overloadStatus ?? [])
      .map(overloadReason),
  ),
]

/**
 * Every bounded label set starts at zero, so rate() and alerts see a series from the first scrape
 * rather than from the first failure. The zero request series carry no model label (the model is
 * only known once one is asked for).
 */
export function initialiseKnownSeries(metrics: ProxyMetrics): void {
  for (const [route, provider] of routeProviders)
    for (const status_class of ['2xx', '4xx', '5xx'])
      metrics.requests.inc({ route, provider, model: '', status_class }, 0)
  for (const provider of providerNames) {
    metrics.upstreamAttempts.inc({ provider }, 0)
    for (const reason of retryReasons) metrics.upstreamRetries.inc({ provider, reason }, 0)
    metrics.failOpen.inc({ provider, stage: 'prepare' }, 0)
    for (const phase of ['client_before_response', 'client_mid_stream', 'upstream_mid_stream'])
      metrics.streamAborts.inc({ provider, phase }, 0)
    for (const edit of ['fold', 'clear', 'drop', 'input']) metrics.edits.inc({ provider, edit }, 0)
    for (const edit of serverEditKinds.get(provider) ?? []) metrics.serverEdits.inc({ provider, edit }, 0)
    for (const cause of prefixBreakCauses) metrics.prefixBreaks.inc({ provider, cause }, 0)
    for (const reason of batchReasons) metrics.batches.inc({ provider, reason }, 0)
    metrics.contextTooLong.inc({ provider }, 0)
  }
  for (const provider of diagnosingProviders)
    for (const [reason, agrees] of cacheMissLabelPairs) metrics.cacheMissDiagnosed.inc({ provider, reason, agrees }, 0)
  metrics.storeErrors.inc({ operation: 'connection' }, 0)
}
