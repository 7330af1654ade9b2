import type { Applied } from '../../providers/adapter-contract.ts'
import { systemNote } from '../../rewrite/notes.ts'
import type { PipelineOutcome } from '../../rewrite/pipeline.ts'
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
  const { json, view, limits } = chat
  return request.format.adapter.apply(json, view, {
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
    ...(outcome.stableTtl === '1h' ? { stableTtl: '1h' as const } : {}),
  })
}
