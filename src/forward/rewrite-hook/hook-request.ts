import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from 'pino'
import type { Config, ModelLimits } from '../../config/schema.ts'
import type { ChatFormat, WireFormat } from '../../providers/provider-contract.ts'
import type { RewriteWorkers } from '../rewrite-workers/pool.ts'
import type { Calibration } from '../../calibration/calibration.ts'
import type { TokenEstimator } from '../../rewrite/estimate.ts'
import type { ChatView } from '../../rewrite/types.ts'
import type { HoldoutArms } from '../../session/holdout-arm.ts'
import type { ConversationState, SessionStore } from '../../session/session-store.ts'
import type { Json } from '../../util/json.ts'
import type { MemberSpan } from '../../util/json-members.ts'

export interface RewriteHookDeps {
  readonly config: Readonly<Config>
  readonly store: SessionStore
  readonly calibration: Calibration
  readonly estimator: TokenEstimator
  readonly logger: Logger
  readonly now?: () => number
  /** Sessions' holdout arms; one per hook unless a test shares it. */
  readonly arms?: HoldoutArms
  /** Worker threads for bodies of `rewriteWorkers.aboveBytes` or more; without them every body is rewritten here. */
  readonly workers?: RewriteWorkers
}

/** One request through the hook; a refit is the same request planned again with what the upstream said. */
export interface HookRequest {
  readonly deps: RewriteHookDeps
  readonly format: ChatFormat
  /** The wire format's name (a worker thread looks its adapter up by it). */
  readonly wire: WireFormat
  readonly original: Buffer
  readonly incoming: IncomingHttpHeaders
  readonly isRefit: boolean
  /** The caller makes a request's records after dispatching it (`PrepareOptions`): one sent as written may leave them until then. */
  readonly recordsAfterDispatch?: boolean
  /** On a refit: the limit the upstream just named, planned with for this one request. */
  readonly toldLimit?: number
  /** On a refit: the conversation as it was before the refused request, which does not count as a turn. */
  readonly memoryBefore?: { readonly state: ConversationState | undefined }
}

/**
 * What the hook's bookkeeping (holdout arm, refusal wording, follow-up) reads of a chat request:
 * a ReadChat is one, and so is a worker thread's summary of a request it parsed (rewrite-workers/).
 */
export interface ChatSummary {
  /** The body; from a worker, only its small top-level fields (what usage readers and refusals read). */
  readonly json: Json
  readonly view: Pick<ChatView, 'model' | 'maxOutputTokens' | 'serverManaged'>
  readonly limits: ModelLimits
}

/** A chat request this hook can rewrite, parsed and viewed. */
export interface ReadChat {
  readonly json: Json
  readonly view: ChatView
  readonly limits: ModelLimits
  readonly large: boolean
  /** Counts this request's text: exactly where the model's tokenizer is public, else the estimate. */
  readonly estimator: TokenEstimator
  /** Puts back number literals a double could not hold (see util/exact-numbers.ts). */
  readonly restoreNumbers: (serialized: string) => string
  /** Where the parse found the top-level members and their arrays' elements in the body, in bytes (for the splice). */
  readonly members?: readonly MemberSpan[] | undefined
}
