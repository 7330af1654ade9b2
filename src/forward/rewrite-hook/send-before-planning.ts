import type { FactorInputs } from '../../calibration/calibration.ts'
import { factorCeiling } from '../../calibration/factor-ceiling.ts'
import { nothingToDecide } from '../../rewrite/nothing-to-decide.ts'
import { effectiveBudget } from '../../rewrite/pipeline.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'
import { budgetLimits, notePlacement } from './pipeline-input.ts'
import type { PlanInputs } from './prepare-with.ts'
import { mayGoAsWritten } from './write-back.ts'

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
