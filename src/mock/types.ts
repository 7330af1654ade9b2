export type MockReplyKind = 'text' | 'tool_use'

/** A complete answer: a JSON body, or SSE frames written one by one. */
export type MockAnswer =
  | { readonly status: number; readonly json: unknown; readonly headers?: Record<string, string> }
  | { readonly status: 200; readonly sse: readonly string[] }

export interface MockOptions {
  /** Context window per model, in the mock's own tokens. */
  readonly windowFor: (model: string) => number
  /** Shortest prefix the Anthropic cache will store. */
  readonly minCacheableFor: (model: string) => number
  readonly replyText: (sequence: number) => string
}
