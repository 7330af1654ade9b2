export type RelayOutcome = 'complete' | 'client_closed' | 'upstream_failed' | 'shutdown'

export interface RelayResult {
  readonly outcome: RelayOutcome
  readonly bytes: number
  readonly sse: boolean
  readonly events: number
  /** Whether ctxgate appended its own error event after an upstream failure mid-stream. */
  readonly errorEventSent: boolean
  readonly failure?: string
  /** performance.now() when the first bytes went to the client. */
  readonly firstWriteAt?: number
}
