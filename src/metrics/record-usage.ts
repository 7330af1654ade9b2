import { promptTokensOf, type ServerEdits, type TokenCounts, type Usage } from '../model-call/usage.ts'
import type { ProxyMetrics } from './proxy-metrics.ts'

/** Adds one answer's usage to the token counters, the OTel histogram included. */
export function recordUsage(metrics: ProxyMetrics, provider: string, model: string, usage: Usage): void {
  countKinds(metrics, provider, model, '', usage)
  if (usage.compaction) countKinds(metrics, provider, model, 'compaction_', usage.compaction)
  if (usage.serverEdits) recordServerEdits(metrics, provider, model, usage.serverEdits)
  observeGenAiTokens(metrics, provider, model, 'input', promptTokensOf(usage))
  observeGenAiTokens(metrics, provider, model, 'output', usage.outputTokens)
}

function countKinds(metrics: ProxyMetrics, provider: string, model: string, prefix: string, counts: TokenCounts): void {
  countTokens(metrics, provider, model, prefix + 'input', counts.inputTokens)
  countTokens(metrics, provider, model, prefix + 'cache_read', counts.cacheReadTokens)
  countTokens(metrics, provider, model, prefix + 'cache_write_5m', counts.cacheWrite5mTokens)
  countTokens(metrics, provider, model, prefix + 'cache_write_1h', counts.cacheWrite1hTokens)
  countTokens(metrics, provider, model, prefix + 'output', counts.outputTokens)
}

function countTokens(metrics: ProxyMetrics, provider: string, model: string, kind: string, value: number): void {
  if (value > 0) metrics.tokens.inc({ provider, model, kind }, value)
}

// Label objects written out whole: `{ ...labels, extra }` made a new hidden class per call on Node 20 (GC time).
function observeGenAiTokens(metrics: ProxyMetrics, provider: string, model: string, type: string, value: number): void {
  const labels = {
    gen_ai_operation_name: 'chat',
    gen_ai_provider_name: provider,
    gen_ai_request_model: model,
    gen_ai_token_type: type,
  }
  metrics.genAiTokens.observe(labels, value)
}

function recordServerEdits(metrics: ProxyMetrics, provider: string, model: string, edits: ServerEdits): void {
  if (edits.clearedToolUses > 0) metrics.serverEdits.inc({ provider, edit: 'clear_tool_uses' }, edits.clearedToolUses)
  if (edits.clearedThinkingTurns > 0)
    metrics.serverEdits.inc({ provider, edit: 'clear_thinking' }, edits.clearedThinkingTurns)
  if (edits.clearedInputTokens > 0) metrics.serverClearedTokens.inc({ provider, model }, edits.clearedInputTokens)
}
