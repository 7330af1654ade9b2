/**
 * When a forced cut would clear a file read, it folds it instead, to the lines the agent is likely to
 * quote (docs/quality.md, "A read folded to what the agent quotes"). Issue-398 at 64k: its design
 * document, cleared at request 3, is what the agent copies code from for twenty requests; folded to its
 * code blocks, headings and tables instead, the run's needed-but-hidden events go from 119 to 42 (BENCHMARKS.md, round 11).
 */
import type { TokenEstimator } from './estimate.ts'
import { readFoldOf } from './notes.ts'
import { callTarget, parsedInput } from './tool-kind.ts'
import type { RewritePolicy, ToolResultView } from './types.ts'

/**
 * A fold that keeps more than this share of the read's tokens is not worth it: the read is cleared.
 * The fold keeps at most half its characters (fold-lines.ts); a file of nothing but short code lines
 * can still come near that in tokens, and most of the room the cut needs would stay.
 */
const maxFoldedShare = 0.8

/** Reads are folded unless turned off, under the strategies that fold at all. */
export function foldsReads(policy: RewritePolicy): boolean {
  return policy.foldReads !== false && policy.strategy !== 'clear-only'
}

/** The file a call reads, when it reads a named file (tool-kind.ts: Read, view, `cat F`, `sed -n 1,80p F`). */
export function readPathOf(call: { readonly name: string; readonly input: unknown } | undefined): string | undefined {
  if (!call) return undefined
  const target = callTarget(call.name, parsedInput(call.input))
  return target.kind === 'read' ? target.path : undefined
}

/** The read's fold, when the result is a read of a named file and the fold is small enough to keep; else undefined. */
export function readFoldFor(
  result: ToolResultView,
  call: { readonly name: string; readonly input: unknown } | undefined,
  estimator: TokenEstimator,
): string | undefined {
  const path = readPathOf(call)
  if (path === undefined) return undefined
  const text = readFoldOf(result, path)
  return estimator.text(text) < result.tokens * maxFoldedShare ? text : undefined
}
