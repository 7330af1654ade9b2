import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { tokenBuckets } from '../model-call/token-buckets.ts'
import { initialiseKnownSeries } from './known-series.ts'

/** The proxy's metrics, registered on an injected registry (never prom-client's global one). */
export function createProxyMetrics(registry: Registry, sessionCount: () => number = () => 0) {
  const metrics = defineProxyMetrics(registry, sessionCount)
  initialiseKnownSeries(metrics)
  return metrics
}

function defineProxyMetrics(registry: Registry, sessionCount: () => number) {
  const registers = [registry]
  return {
    ...requestMetrics(registers),
    ...tokenMetrics(registers),
    ...rewriteMetrics(registers),
    ...billingMetrics(registers),
    ...refetchMetrics(registers),
    ...diagnosisMetrics(registers),
    ...storeMetrics(registers, sessionCount),
  }
}

/** Requests, upstream attempts and time: what every call costs. */
function requestMetrics(registers: Registry[]) {
  return {
    requests: new Counter({
      name: 'ctxgate_requests_total',
      help: 'Requests handled, by route, upstream, model family and status class.',
      labelNames: ['route', 'provider', 'model', 'status_class'] as const,
      registers,
    }),
    upstreamAttempts: new Counter({
      name: 'ctxgate_upstream_attempts_total',
      help: 'Upstream attempts made, retries included.',
      labelNames: ['provider'] as const,
      registers,
    }),
    upstreamRetries: new Counter({
      name: 'ctxgate_upstream_retries_total',
      help: 'Upstream retries before the first byte, by reason.',
      labelNames: ['provider', 'reason'] as const,
      registers,
    }),
    failOpen: new Counter({
      name: 'ctxgate_fail_open_total',
      help: 'Requests forwarded unchanged because ctxgate failed to read or prepare them.',
      labelNames: ['provider', 'stage'] as const,
      registers,
    }),
    streamAborts: new Counter({
      name: 'ctxgate_stream_aborts_total',
      help: 'Responses that did not complete, by who ended them and when.',
      labelNames: ['provider', 'phase'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'ctxgate_request_duration_seconds',
      help: 'Time from request received to response finished.',
      labelNames: ['route', 'provider'] as const,
      buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    }),
    overhead: new Histogram({
      name: 'ctxgate_proxy_overhead_seconds',
      help: 'Time spent in ctxgate itself: before the upstream call (read, parse, rewrite) and on the response path (first upstream byte to first client byte).',
      labelNames: ['route', 'phase'] as const,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers,
    }),
    upstreamTtfb: new Histogram({
      name: 'ctxgate_upstream_ttfb_seconds',
      help: 'Upstream time to first byte, retries included.',
      labelNames: ['route', 'provider'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers,
    }),
  }
}

/** Tokens the upstream reported and ctxgate estimated. */
function tokenMetrics(registers: Registry[]) {
  return {
    tokens: new Counter({
      name: 'ctxgate_tokens_total',
      help: 'Tokens the upstream reported, by kind: input (uncached), cache_read, cache_write_5m, cache_write_1h, output, and the same five prefixed compaction_ for a server-side compaction pass. Cached tokens a provider counts inside its input are taken out of input.',
      labelNames: ['provider', 'model', 'kind'] as const,
      registers,
    }),
    serverEdits: new Counter({
      name: 'ctxgate_server_edits_total',
      help: 'Tool uses (clear_tool_uses) and thinking turns (clear_thinking) the upstream cleared itself, from context_management.applied_edits.',
      labelNames: ['provider', 'edit'] as const,
      registers,
    }),
    serverClearedTokens: new Counter({
      name: 'ctxgate_server_cleared_tokens_total',
      help: 'Input tokens the upstream cleared itself before the model saw the prompt (context_management.applied_edits).',
      labelNames: ['provider', 'model'] as const,
      registers,
    }),
    estimatedPromptTokens: new Counter({
      name: 'ctxgate_estimated_prompt_tokens_total',
      help: "ctxgate's estimate of prompt tokens before and after rewriting.",
      labelNames: ['provider', 'model', 'stage'] as const,
      registers,
    }),
    tokensRemoved: new Counter({
      name: 'ctxgate_tokens_removed_total',
      help: 'Estimated prompt tokens removed by each kind of edit.',
      labelNames: ['provider', 'model', 'edit'] as const,
      registers,
    }),
    estimatorRatio: new Histogram({
      name: 'ctxgate_estimator_ratio',
      help: "ctxgate's prompt estimate divided by the upstream's count (above 1 errs high).",
      labelNames: ['provider', 'model'] as const,
      buckets: [0.5, 0.7, 0.8, 0.9, 0.95, 1, 1.05, 1.1, 1.2, 1.3, 1.5, 2],
      registers,
    }),
    genAiTokens: new Histogram({
      name: 'gen_ai_client_token_usage',
      help: 'OpenTelemetry GenAI gen_ai.client.token.usage: tokens per request by type (input includes cached tokens).',
      labelNames: [
        'gen_ai_operation_name',
        'gen_ai_provider_name',
        'gen_ai_request_model',
        'gen_ai_token_type',
      ] as const,
      buckets: tokenBuckets,
      registers,
    }),
  }
}

/** Calls that fetched again what ctxgate had cleared or folded (docs/quality.md). */
function refetchMetrics(registers: Registry[]) {
  return {
    refetches: new Counter({
      name: 'ctxgate_refetches_total',
      help: 'Tool calls that fetched again a result ctxgate had cleared or folded (same tool and input, or a read of the same file) within 20 requests, by tool.',
      labelNames: ['provider', 'tool'] as const,
      registers,
    }),
    refetchTokens: new Counter({
      name: 'ctxgate_refetch_tokens_total',
      help: 'Estimated tokens of the results those re-fetches brought back, by tool.',
      labelNames: ['provider', 'tool'] as const,
      registers,
    }),
  }
}

/** What the rewrite engine did to requests. */
function rewriteMetrics(registers: Registry[]) {
  return {
    edits: new Counter({
      name: 'ctxgate_edits_total',
      help: 'Tool results folded or cleared and messages dropped (new and re-applied).',
      labelNames: ['provider', 'edit'] as const,
      registers,
    }),
    batches: new Counter({
      name: 'ctxgate_edit_batches_total',
      help: 'New batches of edits, by reason: over_budget (the hard limit), pays_back (the economy priced it), cold_cache (the cache had expired anyway), restore (below budget, only results restored because the agent uses them).',
      labelNames: ['provider', 'reason'] as const,
      registers,
    }),
    economyLedger: new Counter({
      name: 'ctxgate_economy_ledger_tokens_total',
      help: 'The regret ledger of below-budget batches, in uncached-input tokens, by reason: predicted_cost and predicted_saving (over the conservative horizon) when a batch is made; realized_rewrite (upstream cache writes beyond the client growth) and realized_saved (reads later requests were spared) as they come true.',
      labelNames: ['provider', 'reason', 'figure'] as const,
      registers,
    }),
  }
}

/** What requests cost as billed: tokens at their price multiples, and dollars. */
function billingMetrics(registers: Registry[]) {
  return {
    billedInputTokens: new Counter({
      name: 'ctxgate_billed_input_tokens_total',
      help: 'Prompt tokens as billed, in uncached-input equivalents (cache writes and reads at their price multiples), from upstream usage.',
      labelNames: ['provider', 'model'] as const,
      registers,
    }),
    billedDollars: new Counter({
      name: 'ctxgate_billed_dollars_total',
      help: 'Dollars of prompt and output at the configured prices (models with a known price only).',
      labelNames: ['provider', 'model'] as const,
      registers,
    }),
    prefixBreaks: new Counter({
      name: 'ctxgate_cache_prefix_breaks_total',
      help: "Requests whose prefix did not extend the previous request's of the same conversation, by cause.",
      labelNames: ['provider', 'cause'] as const,
      registers,
    }),
    refusalsAvoided: new Counter({
      name: 'ctxgate_refusals_avoided_total',
      help: 'Requests that would not have fit the model window as sent, forwarded within budget.',
      labelNames: ['provider', 'model'] as const,
      registers,
    }),
    deadCacheWrites: new Counter({
      name: 'ctxgate_dead_cache_write_tokens_total',
      help: 'Cache-write tokens no later request of the session read before they expired (estimated from reported usage), by cause.',
      labelNames: ['provider', 'cause'] as const,
      registers,
    }),
    dropLoops: new Counter({
      name: 'ctxgate_session_drop_loop_warnings_total',
      help: 'Warnings that one session keeps needing whole old rounds or turns dropped (the agent may be looping).',
      labelNames: ['provider'] as const,
      registers,
    }),
    contextTooLong: new Counter({
      name: 'ctxgate_context_too_long_total',
      help: 'Requests ctxgate answered itself because even one round could not fit.',
      labelNames: ['provider'] as const,
      registers,
    }),
    unknownModelRequests: new Counter({
      name: 'ctxgate_unknown_model_requests_total',
      help: 'Model calls whose model matched no models: entry but the catch-all, so they got its limits.',
      labelNames: ['model'] as const,
      registers,
    }),
  }
}

/** What the provider itself said about cache misses, where the client asked it (and the provider can say). */
function diagnosisMetrics(registers: Registry[]) {
  return {
    cacheMissDiagnosed: new Counter({
      name: 'ctxgate_cache_miss_diagnosed_total',
      help: "Answers carrying the provider's own cache-miss diagnosis (the client asked for it), by the provider's reason and whether ctxgate's own prefix-break cause agreed.",
      labelNames: ['provider', 'reason', 'agrees'] as const,
      registers,
    }),
  }
}

/** The session store. */
function storeMetrics(registers: Registry[], sessionCount: () => number) {
  return {
    storeErrors: new Counter({
      name: 'ctxgate_store_errors_total',
      help: 'Session store operations that failed (ctxgate kept serving without the store).',
      labelNames: ['operation'] as const,
      registers,
    }),
    sessions: new Gauge({
      name: 'ctxgate_sessions',
      help: 'Conversations whose state ctxgate holds.',
      registers,
      collect() {
        this.set(sessionCount())
      },
    }),
  }
}

export type ProxyMetrics = ReturnType<typeof defineProxyMetrics>

export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other'
}
