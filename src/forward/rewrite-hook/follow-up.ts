import type { AnswerFollowUp, PrepareResult, Prepared } from '../../request/prepared.ts'
import { promptTokensOf, type AnsweredRequest, type Usage, type UsageReader } from '../../model-call/usage.ts'
import type { LengthRefusal } from '../../providers/length-refusal.ts'
import type { ChatFormat } from '../../providers/provider-contract.ts'
import type { ConversationRequest } from '../../calibration/calibration.ts'
import type { ConversationState } from '../../session/session-store.ts'
import type { ChatSummary, HookRequest } from './hook-request.ts'

/** The follow-up of a request ctxgate did not rewrite (or a control session's): its usage is read, nothing more. */
export function usageOnly(format: ChatFormat, answered: AnsweredRequest | undefined): AnswerFollowUp {
  return {
    usageReader: () => format.usage(answered),
    recordUsage: () => Promise.resolve(),
    replannable: false,
    replan: () => Promise.resolve(undefined),
  }
}

/** What a rewritten request was sent as: what calibration compares the answer with, and what a refit must beat. */
export interface SentRewrite {
  readonly sentEstimate: number
  readonly sized: ConversationRequest
  readonly planned: number
  readonly state: ConversationState | undefined
  /** Size of the refused body: a refit is only worth sending when it is strictly smaller. */
  readonly bytes: number
}

/** Share of ctxgate's estimate of a refused request taken as the limit when the refusal names none. */
const unnamedLimitShare = 0.9

/** A rewritten request's follow-up: reported usage calibrates the estimate; a length refusal is re-planned once. */
export class RewriteFollowUp implements AnswerFollowUp {
  replannable: boolean
  #request: HookRequest
  readonly #chat: ChatSummary
  readonly #scope: string
  /** Read once the records are made: a request sent before its plan has none before then. */
  readonly #sent: () => SentRewrite
  readonly #prepareAgain: (request: HookRequest) => Promise<PrepareResult>
  /** A request sent before its records: they are made (and its state saved) before a refit plans. */
  readonly #recorded: (() => Promise<unknown>) | undefined

  constructor(
    request: HookRequest,
    chat: ChatSummary,
    scope: string,
    sent: SentRewrite | (() => SentRewrite),
    prepareAgain: (request: HookRequest) => Promise<PrepareResult>,
    recorded?: () => Promise<unknown>,
  ) {
    this.#request = request
    this.#chat = chat
    this.#scope = scope
    this.#sent = typeof sent === 'function' ? sent : () => sent
    this.#prepareAgain = prepareAgain
    this.#recorded = recorded
    // A server-managed request is never re-planned smaller: ctxgate makes no content edits to it.
    this.replannable = !request.isRefit && chat.view.serverManaged !== true
  }

  settle(): void {
    this.replannable = false
    this.#request = { ...this.#request, original: Buffer.alloc(0) }
  }

  usageReader(): UsageReader {
    return this.#request.format.usage({ body: this.#chat.json, headers: this.#request.incoming })
  }

  recordUsage(reported: Usage): Promise<void> {
    return this.#recordSize(promptTokensOf(reported))
  }

  /**
   * Refused for length, re-plan once: with the measured ratio and the named limit when the upstream
   * gave them, else below the estimate of what was refused (it was over the limit, whatever the limit
   * is). A new, smaller request, not a retry.
   */
  async replan({ actualTokens, limit: named }: LengthRefusal): Promise<Prepared | undefined> {
    if (!this.replannable) return undefined
    // Records that failed leave the request as if preparing it had failed: sent as it was, never re-planned.
    if (
      this.#recorded &&
      !(await this.#recorded().then(
        () => true,
        () => false,
      ))
    )
      return undefined
    const { calibration } = this.#request.deps
    const sent = this.#sent()
    if (actualTokens !== undefined) await this.#recordSize(actualTokens)
    const limit = named ?? (actualTokens === undefined ? Math.floor(sent.planned * unnamedLimitShare) : undefined)
    if (limit !== undefined)
      await calibration
        .recordLimit(this.#chat.view.model, limit, this.#scope, this.#chat.limits.window)
        .catch(() => undefined)
    const again = await this.#prepareAgain({
      ...this.#request,
      isRefit: true,
      recordsAfterDispatch: false,
      memoryBefore: { state: sent.state },
      ...(limit === undefined ? {} : { toldLimit: limit }),
    })
    // A refit no smaller than what was refused (a lying refusal, or nothing left to take out) would be
    // refused again, or be larger: the client gets the upstream's refusal instead.
    if (again.kind !== 'forward' || again.prepared.body.length >= sent.bytes) return undefined
    return { ...again.prepared, log: { ...again.prepared.log, refit: true } }
  }

  #recordSize(actualTokens: number): Promise<void> {
    // What was sent is read once the records are made: records that fail take the follow-up off the answer.
    const { sentEstimate, sized } = this.#sent()
    return this.#request.deps.calibration
      .record(this.#chat.view.model, sentEstimate, actualTokens, this.#scope, sized)
      .catch(() => undefined)
  }
}
