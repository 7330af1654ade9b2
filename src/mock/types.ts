export type MockReplyKind = 'text' | 'tool_use'

/** What one answer billed, in the mock's own tokens, for the mock's usage ledger. */
export interface MockUsage {
  /** Input tokens neither read from nor written to the cache. */
  readonly inputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWrite5mTokens: number
  readonly cacheWrite1hTokens: number
  readonly outputTokens: number
}

/** A complete answer: a JSON body, or SSE frames written one by one. */
export type MockAnswer =
  | {
      readonly status: number
      readonly json: unknown
      readonly headers?: Record<string, string>
      readonly usage?: MockUsage
    }
  | { readonly status: 200; readonly sse: readonly string[]; readonly usage?: MockUsage }

export interface MockOptions {
  /** Context window per model, in the mock's own tokens. */
  readonly windowFor: (model: string) => number
  /** Shortest prefix the Anthropic cache will store. */
  readonly minCacheableFor: (model: string) => number
  readonly replyText: (sequence: number) => string
  /** Whether max_tokens must fit the window beside the prompt, as the APIs require (default true). */
  readonly replyRoomInWindow?: boolean
  /** When set, a request offering a shell-like tool gets an agent loop of this many tool calls. */
  readonly agentSteps?: number
  /** Agent loop over Messages and Chat Completions: every N-th step re-reads a file read many steps before. */
  readonly agentRereadEvery?: number
}
