import type { EventSourceMessage } from 'eventsource-parser'

/** Token counts of one answer, normalized: input is uncached input only, as Anthropic reports it. */
export interface Usage {
  readonly inputTokens: number
  readonly cacheWrite5mTokens: number
  readonly cacheWrite1hTokens: number
  readonly cacheReadTokens: number
  readonly outputTokens: number
}

export const zeroUsage: Usage = {
  inputTokens: 0,
  cacheWrite5mTokens: 0,
  cacheWrite1hTokens: 0,
  cacheReadTokens: 0,
  outputTokens: 0,
}

export function promptTokensOf(usage: Usage): number {
  return usage.inputTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens + usage.cacheReadTokens
}

/** Reads usage from a JSON answer or, event by event, from a stream. One reader per response. */
export interface UsageReader {
  fromJson(body: unknown): Usage | undefined
  onEvent(event: EventSourceMessage): void
  /** What the stream reported so far (a cut stream reports what arrived). */
  result(): Usage | undefined
  /** The stream has carried its final usage. */
  complete(): boolean
}
