import { CalibrationSnapshot } from '../../calibration/calibration-snapshot.ts'
import type { FactorInputs } from '../../calibration/calibration.ts'
import { factorCeiling } from '../../calibration/factor-ceiling.ts'
import { CtxgateError } from '../../errors.ts'
import { compactionRequestOf } from '../../model-call/compaction-request.ts'
import { nothingToDecide } from '../../rewrite/nothing-to-decide.ts'
import { effectiveBudget } from '../../rewrite/pipeline.ts'
import { decideCalibrated } from './calibrated-plan.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'
import { budgetLimits, notePlacement } from './pipeline-input.ts'
import type { AsSentPlan, PlanInputs } from './prepare-with.ts'
import { mayGoAsWritten, sentAsWritten } from './write-back.ts'

/**
 * Whether the request goes upstream before it is planned: it may go as the client wrote it, and its
 * plan could do nothing else (rewrite/nothing-to-decide.ts). Its plan is then made after dispatch,
 * with its records. A short request with nothing to edit, often an agent's first turn or a side
 * call, so skips the pipeline's input, the economy and the marker checks before its bytes leave.
 */
export function plannableAfterSending(
  request: HookRequest,
  chat: ReadChat,
  inputs: PlanInputs,
  factorInputs: FactorInputs,
): boolean {
  if (!mayGoAsWritten(request)) return false
  const { config } = request.deps
  const { view } = chat
  return nothingToDecide({
    view,
    memory: inputs.state,
    budget: effectiveBudget(budgetLimits(request, chat, inputs.scope), view.maxOutputTokens),
    factorCeiling: factorCeiling(factorInputs),
    note: config.rewrite.systemNote ? notePlacement(config, request.format.adapter) : undefined,
    minCacheableTokens: chat.limits.minCacheableTokens,
  })
}

/**
 * The plan of a request sent before it was planned (above), made after dispatch for
 * its records: the plan it would have had. One that would have changed the request fails its records,
 * which leaves it as a failed preparation would: sent as it was (test/property/records-after-dispatch).
 */
export function planAfterSending(
  request: HookRequest,
  chat: ReadChat,
  inputs: PlanInputs,
  limit: number | undefined,
  factorInputs: FactorInputs,
): AsSentPlan {
  const calibration = new CalibrationSnapshot(limit, factorInputs)
  const asAtDispatch = { ...request, deps: { ...request.deps, calibration } }
  const { decided, factor, input } = decideCalibrated(asAtDispatch, chat, inputs, factorInputs)
  const asSent =
    decided.kind === 'rewritten' && sentAsWritten(asAtDispatch, chat, decided, inputs.clientSessionId, false)
  if (decided.kind !== 'rewritten' || !asSent)
    throw new CtxgateError('CTXGATE_INTERNAL', 'the plan made after sending would have changed the request')
  const { tail, breakpoints } = asSent
  const noteTokens = input.note?.tokens ?? 0
  return { factor, noteTokens, decided, tail, breakpoints, compactionOf: () => compactionRequestOf(chat.json) }
}
