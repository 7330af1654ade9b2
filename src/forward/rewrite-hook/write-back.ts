import type { Applied, ApplyOptions } from '../../providers/adapter-contract.ts'
import { systemNote } from '../../rewrite/notes.ts'
import type { DecidedRewrite, PipelineOutcome } from '../../rewrite/pipeline.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'
import { notePlacement } from './pipeline-input.ts'

export type Rewritten = Extract<PipelineOutcome, { kind: 'rewritten' }>

/**
 * The planned edits, the note and the cache breakpoints, written into the client's body by its adapter.
 * A client's compaction request gets no marker of ctxgate's: its answer starts a new history, so an
 * entry written at its end is never read (docs/dead-writes.md).
 */
export function writeBack(
  request: HookRequest,
  chat: ReadChat,
  outcome: Rewritten,
  sessionId: string,
  clientCompaction: boolean,
): Applied {
  const options = applyOptions(request, chat, outcome, sessionId, clientCompaction, outcome.stableTtl)
  return request.format.adapter.apply(chat.json, chat.view, options)
}

/**
 * What `writeBack` would write, when it is the client's body as sent and the caller makes the
 * request's records after dispatching it: found from the decided plan alone (no head TTL, no
 * records). Undefined whenever it would change anything, on a refit, or when the caller did not ask.
 */
export function sentAsWritten(
  request: HookRequest,
  chat: ReadChat,
  decided: Extract<DecidedRewrite, { kind: 'rewritten' }>,
  sessionId: string,
  clientCompaction: boolean,
): Applied | undefined {
  const { adapter } = request.format
  if (!mayGoAsWritten(request) || adapter.asSent === undefined) return undefined
  if (decided.edits.length > 0 || decided.noteOn) return undefined
  return adapter.asSent(chat.json, chat.view, applyOptions(request, chat, decided, sessionId, clientCompaction))
}

/**
 * Whether the hook may send this request as the client wrote it before its records: the caller asked,
 * it is not a refit, and its adapter can say so. An adapter that may add a usage option to a stream
 * is never asked: its body is not the client's.
 */
export function mayGoAsWritten(request: HookRequest): boolean {
  const { adapter } = request.format
  return (
    request.recordsAfterDispatch === true && !request.isRefit && adapter.asSent !== undefined && !adapter.requestUsage
  )
}

function applyOptions(
  request: HookRequest,
  chat: ReadChat,
  outcome: Pick<Rewritten, 'edits' | 'noteOn' | 'previousTail' | 'nextEditResult' | 'followingEditResult' | 'report'>,
  sessionId: string,
  clientCompaction: boolean,
  stableTtl?: '5m' | '1h',
): ApplyOptions {
  const { limits } = chat
  return {
    edits: outcome.edits,
    ...(outcome.noteOn
      ? { systemNote, systemNoteAt: notePlacement(request.deps.config, request.format.adapter).at }
      : {}),
    sessionId,
    ...(outcome.previousTail !== undefined ? { previousTail: outcome.previousTail } : {}),
    ...(outcome.nextEditResult !== undefined ? { nextEditResult: outcome.nextEditResult } : {}),
    ...(outcome.followingEditResult !== undefined ? { followingEditResult: outcome.followingEditResult } : {}),
    minCacheableTokens: clientCompaction ? Number.POSITIVE_INFINITY : limits.minCacheableTokens,
    thinkingBound: limits.thinkingBoundToPrefix,
    firstEditedMessage: outcome.report.firstEditedMessage,
    estimator: chat.estimator,
    ...(stableTtl === '1h' ? { stableTtl: '1h' as const } : {}),
  }
}
