import type { RewriteReport } from '../../rewrite/types.ts'

/** A plan re-run at most twice is enough: the factor only rises, towards the prior's. */
const maxReplans = 2

/**
 * Plans with the calibration factor, then, when the plan made a new batch, again with the factor
 * for what is left after it: the batch takes out old content only, so the new content, sized with
 * a larger factor, is a larger share of what is sent.
 */
export function planCalibrated<Outcome extends { readonly kind: string; readonly report: RewriteReport }>(
  plan: (factor: number) => Outcome,
  factorFor: (after: { sentAfterEdits: number } | undefined) => number,
): { outcome: Outcome; factor: number } {
  let factor = factorFor(undefined)
  let outcome = plan(factor)
  for (let replan = 0; replan < maxReplans && outcome.kind === 'rewritten' && outcome.report.newBatch; replan++) {
    const settled = factorFor({ sentAfterEdits: outcome.report.estimatedAfter / factor })
    if (settled <= factor) break
    factor = settled
    outcome = plan(factor)
  }
  return { outcome, factor }
}
