import { countFactorFrom, type FactorInputs } from '../../calibration/calibration.ts'
import { decideRewrite, type DecidedRewrite } from '../../rewrite/pipeline.ts'
import { planCalibrated } from './calibrated-plan.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'
import { pipelineInput } from './pipeline-input.ts'
import type { PlanInputs } from './prepare-with.ts'

/** The pipeline's decision with the calibration's factor, re-planned as planCalibrated asks. */
export function decideHere(
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
