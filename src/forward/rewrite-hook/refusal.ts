import { configuredBudget } from '../../config/model-limits.ts'
import { CtxgateError } from '../../errors.ts'
import { clientFamily } from '../../live/client-family.ts'
import type { PipelineInput, PipelineOutcome } from '../../rewrite/pipeline.ts'
import { firstHeader } from '../../util/headers.ts'
import { isJsonObject } from '../../util/json.ts'
import type { ChatSummary, HookRequest } from './hook-request.ts'
import { budgetHeader } from './pipeline-input.ts'
import { explainPromptRoom, type PromptRoom } from './refusal-explanation.ts'

export type TooLong = Extract<PipelineOutcome, { kind: 'too-long' }>

/** ctxgate's own refusal: the provider's own opening words first (clients recover on them), then why. */
export function tooLong(
  request: HookRequest,
  chat: ChatSummary,
  limits: PipelineInput['limits'],
  outcome: TooLong,
): CtxgateError {
  const { estimatedBefore, budget } = outcome.report
  const arithmetic = explainPromptRoom(promptRoom(request, chat, limits, outcome))
  return new CtxgateError(
    'CTXGATE_CONTEXT_TOO_LONG',
    `${request.format.tooLongWording(estimatedBefore, budget)} ${outcome.message} ${arithmetic}`,
  )
}

/** The numbers a refused request was planned with, for the refusal's own explanation. */
function promptRoom(
  request: HookRequest,
  chat: ChatSummary,
  limits: PipelineInput['limits'],
  outcome: TooLong,
): PromptRoom {
  const { json, view } = chat
  const headerBudget = budgetHeader(request)
  const outputField =
    ['max_output_tokens', 'max_completion_tokens', 'max_tokens'].find((field) => isJsonObject(json) && field in json) ??
    'max_tokens'
  return {
    window: limits.window,
    maxOutputTokens: view.maxOutputTokens,
    configuredBudget: configuredBudget(chat.limits),
    ...(headerBudget === undefined ? {} : { headerBudget }),
    ...(limits.learnedLimit === undefined ? {} : { learnedLimit: limits.learnedLimit }),
    budget: outcome.report.budget,
    client: clientFamily(firstHeader(request.incoming['user-agent'])),
    outputField,
  }
}
