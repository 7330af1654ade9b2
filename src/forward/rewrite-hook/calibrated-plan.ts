import { countFactorFrom, type FactorInputs } from '../../calibration/calibration.ts'
import { decideRewrite, type DecidedRewrite } from '../../rewrite/pipeline.ts'
import type { RewriteReport } from '../../rewrite/types.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'
import { pipelineInput } from './pipeline-input.ts'
import type { PlanInputs } from './prepare-with.ts'

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

/** The pipeline's decision for a request with the calibration's factor, re-planned as `planCalibrated` asks: on the main thread, after dispatch, or in a rewrite worker (with a calibration snapshot). */
export function decideCalibrated(
  request: HookRequest,
  chat: ReadChat,
  inputs: PlanInputs,
  factorInputs: FactorInputs,
): { decided: DecidedRewrite; factor: number; input: ReturnType<typeof pipelineInput> } {
  const { deps } = request
  const { scope, state, now, finishedLengths, sized } = inputs
  const input = pipelineInput(request, chat, scope)
  const countFactor = countFactorFrom(factorInputs) || undefined
  // Every field written out, in one order: a spread of `input` took V8's slow copy (a tenth of the hook's time, profiled).
  const decide = (factor: number): DecidedRewrite =>
    decideRewrite({
      view: input.view,
      memory: state,
      limits: input.limits,
      policy: input.policy,
      factor,
      countFactor,
      estimator: input.estimator,
      note: input.note,
      economy: input.economy,
      now,
      finishedLengths,
      reachBack: input.reachBack,
      dropNoteFraming: input.dropNoteFraming,
    })
  const { outcome: decided, factor } = planCalibrated(decide, (sentAfterEdits) =>
    deps.calibration.factor(chat.view.model, { ...sized, ...sentAfterEdits }, scope),
  )
  return { decided, factor, input }
}
