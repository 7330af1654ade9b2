import type { IncomingHttpHeaders } from 'node:http'
import type { EventSourceMessage } from 'eventsource-parser'
import type { CacheDiagnosis } from './cache-diagnosis.ts'

/** Token counts of one model pass, normalized: input is uncached input only, as Anthropic reports it. */
export interface TokenCounts {
  readonly inputTokens: number
  readonly cacheWrite5mTokens: number
  readonly cacheWrite1hTokens: number
  readonly cacheReadTokens: number
  readonly outputTokens: number
}

/** Edits the upstream made to the prompt itself (Anthropic context editing), summed over one answer. */
export interface ServerEdits {
  readonly clearedToolUses: number
  readonly clearedThinkingTurns: number
  readonly clearedInputTokens: number
}

/** Token counts of one answer, plus what the upstream billed beside them. */
export interface Usage extends TokenCounts {
  /** A server-side compaction's own pass: billed, and not part of the counts above. */
  readonly compaction?: TokenCounts
  readonly serverEdits?: ServerEdits
  /** The provider's own reason for a cache miss, when the client asked it for one. */
  readonly cacheDiagnosis?: CacheDiagnosis
}

/**
 * The largest token count one answer may report: far above any model's window (the largest
 * published is about 10M tokens). Anything larger, negative or not a finite number is a broken or
 * hostile upstream, and counts as 0, so it never reaches a counter, a session total or the page.
 */
export const maxReportedTokens = 100_000_000

/** One reported token count, bounded: a whole number in 0…maxReportedTokens, else 0. */
export function tokenCount(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > maxReportedTokens) return 0
  return Math.floor(value)
}

/** A sum of reported counts, kept within the same bound (many passes cannot add up past it). */
export function boundedSum(a: number, b: number): number {
  return Math.min(maxReportedTokens, a + b)
}

export const zeroUsage: Usage = {
  inputTokens: 0,
  cacheWrite5mTokens: 0,
  cacheWrite1hTokens: 0,
  cacheReadTokens: 0,
  outputTokens: 0,
}

/** The prompt the answer was generated from (a compaction pass's prompt is not part of it). */
export function promptTokensOf(usage: TokenCounts): number {
  return usage.inputTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens + usage.cacheReadTokens
}

/** Two sets of counts added field by field. */
export function addTokenCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cacheWrite5mTokens: a.cacheWrite5mTokens + b.cacheWrite5mTokens,
    cacheWrite1hTokens: a.cacheWrite1hTokens + b.cacheWrite1hTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  }
}

/** Everything one answer was billed for: its own counts plus a compaction pass's. */
export function billedTokenCounts(usage: Usage): TokenCounts {
  return usage.compaction ? addTokenCounts(usage, usage.compaction) : usage
}

/** The request an answer is to, as the client sent it: some readers only read what the client asked for. */
export interface AnsweredRequest {
  readonly body: Readonly<Record<string, unknown>>
  readonly headers: IncomingHttpHeaders
}

/** What an answer said about itself (for the trace's gen_ai.response.* attributes). */
export interface ResponseFacts {
  readonly id?: string
  readonly model?: string
  readonly finishReasons?: readonly string[]
}

/** Reads usage from a JSON answer or, event by event, from a stream. One reader per response. */
export interface UsageReader {
  fromJson(body: unknown): Usage | undefined
  onEvent(event: EventSourceMessage): void
  /** What the stream reported so far (a cut stream reports what arrived). */
  result(): Usage | undefined
  /** The stream has carried its final usage. */
  complete(): boolean
  /** The answer's id, model and finish reasons, from what was read (the JSON body or the stream's events). */
  response?(): ResponseFacts | undefined
}
