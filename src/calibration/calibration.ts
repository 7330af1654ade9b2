import { modelFamily } from '../providers/model-family.ts'

/**
 * Per-model correction of the estimator from the prompt sizes the upstream reports (docs/economy.md, calibration).
 * The factor is the largest recent actual ÷ estimate ratio, so a budget check never trusts an
 * estimate that has been seen to undercount.
 *
 * What one request can change is bounded, because what it teaches applies to later requests:
 * a ratio counts only within [minRatio, maxRatio]; a limit the upstream named stays between half
 * the configured window and the window, applies only to the scope it was learned in (a tenant, or
 * one conversation), expires, and is dropped as soon as a larger prompt is answered.
 */
const window = 64
/** Until a model has reported back, assume the estimate may be this far low. */
export const defaultFactor = 1.15
/** One observation moves the factor at most this far: the estimator is never off by more on real text. */
export const minRatio = 0.5
export const maxRatio = 2
/** A learned limit never cuts the configured window by more than half. */
export const limitFloorShare = 0.5
/** Learned limits remembered per process; the least recently learned go first. */
const maxLimits = 10_000
/** A conversation's own ratios kept, newest last: the newest sizes it; the store keeps the same window as before. */
const conversationWindow = 8
/** Conversations whose own ratios are remembered per process; the least recently answered go first. */
const maxConversations = 10_000
/**
 * Margin over a conversation's newest ratio: what went upstream last time counts what it counted,
 * and the margin is room for new content a little harder than the prior assumes (docs/estimates.md).
 */
export const conversationMargin = 1.03
/**
 * Margin over a conversation's highest actual ÷ reference-vocabulary ratio for content it has not
 * sent before: a real BPE count follows a change of content kind that the character estimate does
 * not see, so new content is sized at the lower of this and the prior (docs/estimates.md).
 */
export const referenceMargin = 1.08

/** One request of a conversation, as the calibration sizes it. */
export interface ConversationRequest {
  /** The conversation's key (scope, session and fingerprint). */
  readonly key: string
  /** The estimate of the whole prompt as the client sent it, before ctxgate's edits, without any factor. */
  readonly unedited: number
  /** The estimate of what goes upstream once this request's own edits are made, when known: a batch clears old content only, so the new content weighs more. */
  readonly sentAfterEdits?: number
  /** The reference vocabulary's count of the same unedited prompt (docs/estimates.md), when it is loaded. */
  readonly reference?: number
}

/** What a conversation taught, from its newest answered request back; replicas share it through a store. */
export interface ConversationLesson {
  /** Its newest actual ÷ estimate ratios, newest last. */
  readonly ratios: readonly number[]
  /** Its newest answered request: the client's prompt before edits, and what went upstream (raw estimates). */
  readonly unedited: number
  readonly sent: number
  /** The reference vocabulary's count of that unedited prompt, when it was known. */
  readonly reference?: number
  /** Its newest actual ÷ reference-count ratios (of what went upstream), newest last. */
  readonly densities?: readonly number[]
}

/** Where replicas share what they learned (a store implements it; without one, learning stays local). */
export interface CalibrationSync {
  /** `ratioKey`: where the model-wide ratios live (the family, per tenant when clients authenticate). */
  /** With `conversation` (its key and the model family), also what that conversation taught. */
  load(
    ratioKey: string,
    family: string,
    scope: string,
    conversation?: string,
  ): Promise<
    | { readonly ratios: readonly number[]; readonly limit?: number; readonly conversation?: ConversationLesson }
    | undefined
  >
  /** With `conversation`, also replaces what that conversation taught (same key as `load`). */
  pushRatio(
    ratioKey: string,
    ratio: number,
    keep: number,
    conversation?: { readonly key: string; readonly memory: ConversationLesson },
  ): Promise<void>
  pushLimit(family: string, scope: string, limit: number, ttlMs: number): Promise<void>
  clearLimit(family: string, scope: string): Promise<void>
}

/** How long a learned limit lives, and the clock that ages it (injected: the core reads no clock). */
export interface LimitAging {
  readonly ttlMs: number
  readonly now: () => number
}

interface LearnedLimit {
  readonly limit: number
  readonly learnedAt: number
}

export class Calibration {
  readonly #ratios = new Map<string, number[]>()
  readonly #limits = new Map<string, LearnedLimit>()
  /** Per conversation (its key and model family): what it taught; shared through the store when there is one. */
  readonly #conversations = new Map<string, ConversationLesson>()
  readonly #sync: CalibrationSync | undefined
  readonly #aging: LimitAging | undefined

  /** Without `aging`, learned limits last until a larger prompt succeeds (tests and replays). */
  constructor(sync?: CalibrationSync, aging?: LimitAging) {
    this.#sync = sync
    this.#aging = aging
  }

  /** Takes in what other replicas learned about this model and scope (and conversation); a no-op without a shared store. */
  async refresh(model: string, scope: string, conversation?: string): Promise<void> {
    if (!this.#sync) return
    const family = modelFamily(model)
    const key = ratioKey(family, scope)
    const conversationKey = conversation === undefined ? undefined : `${conversation}\n${family}`
    const shared = await this.#sync.load(key, family, scope, conversationKey)
    if (!shared) return
    if (shared.ratios.length > 0) this.#ratios.set(key, shared.ratios.map(clampRatio))
    const taught = conversationKey === undefined ? undefined : wellFormed(shared.conversation)
    // The newest answer may have gone to another replica: its memory wins, so every replica sizes alike.
    if (conversationKey !== undefined && taught) this.#keepConversation(conversationKey, taught)
    // The shared copy wins either way: another replica may have corrected or expired it.
    if (shared.limit !== undefined) this.#remember(`${scope}\n${family}`, shared.limit)
    else this.#limits.delete(`${scope}\n${family}`)
  }

  /** The upstream named its real prompt limit for this model (in a length refusal) to a request of `scope`. */
  async recordLimit(model: string, limit: number, scope: string, configuredWindow: number): Promise<void> {
    if (!(limit > 0) || limit >= configuredWindow) return
    const bounded = Math.max(Math.floor(configuredWindow * limitFloorShare), Math.floor(limit))
    const family = modelFamily(model)
    this.#remember(`${scope}\n${family}`, bounded)
    await this.#sync?.pushLimit(family, scope, bounded, this.#aging?.ttlMs ?? 0)
  }

  limit(model: string, scope: string): number | undefined {
    const key = `${scope}\n${modelFamily(model)}`
    const learned = this.#limits.get(key)
    if (!learned) return undefined
    if (this.#aging && this.#aging.now() - learned.learnedAt > this.#aging.ttlMs) {
      this.#limits.delete(key)
      return undefined
    }
    return learned.limit
  }

  /**
   * A reported prompt size; one larger than a learned limit proves that limit wrong, so it goes.
   * With `conversation`, the ratio also sizes that conversation's later requests (and only its).
   */
  async record(
    model: string,
    estimated: number,
    actual: number,
    scope?: string,
    conversation?: ConversationRequest,
  ): Promise<void> {
    if (!(estimated > 0) || !(actual > 0)) return
    const family = modelFamily(model)
    const ratio = clampRatio(actual / estimated)
    const taught =
      conversation === undefined
        ? undefined
        : this.#rememberConversation(`${conversation.key}\n${family}`, ratio, conversation, estimated, actual)
    const key = ratioKey(family, scope)
    const ratios = this.#ratios.get(key) ?? []
    ratios.push(ratio)
    if (ratios.length > window) ratios.shift()
    this.#ratios.set(key, ratios)
    if (this.#ratios.size > maxConversations) this.#ratios.delete(this.#ratios.keys().next().value as string)
    const corrected = scope === undefined ? undefined : this.#correctLimit(model, family, actual, scope)
    await Promise.all([this.#sync?.pushRatio(key, ratio, window, taught), corrected])
  }

  /**
   * Estimates times this are an upper bound on the real count. Before a conversation's first answer
   * the model's factor sizes everything. After it, what the conversation sent last time is sized
   * with its newest ratio (one model-wide factor cannot fit a Japanese log and a JSON dump at once),
   * and what it added since at most at the largest of its own factor, the model's and the prior: a
   * ratio says nothing about content the upstream has not counted yet, and the model's ratios may
   * all come from content unlike it. With the reference vocabulary's count, the added content is
   * sized by that count instead where it is lower, never below the conversation's own factor.
   */
  factor(model: string, conversation?: ConversationRequest, scope?: string): number {
    return factorFrom(this.factorInputs(model, conversation?.key, scope), conversation)
  }

  /** What `factor` reads for one conversation: a snapshot that sizes it elsewhere (a worker thread) exactly as here. */
  factorInputs(model: string, conversationKey?: string, scope?: string): FactorInputs {
    const family = modelFamily(model)
    const ratios = this.#ratios.get(ratioKey(family, scope))
    const modelWide = !ratios || ratios.length === 0 ? defaultFactor : Math.max(...ratios) * 1.02
    const own = conversationKey === undefined ? undefined : this.#conversations.get(`${conversationKey}\n${family}`)
    return own ? { modelWide, own } : { modelWide }
  }

  samples(model: string, scope?: string): number {
    return this.#ratios.get(ratioKey(modelFamily(model), scope))?.length ?? 0
  }

  async #correctLimit(model: string, family: string, actual: number, scope: string): Promise<void> {
    const learned = this.limit(model, scope)
    if (learned === undefined || actual <= learned) return
    this.#limits.delete(`${scope}\n${family}`)
    await this.#sync?.clearLimit(family, scope)
  }

  #rememberConversation(
    key: string,
    ratio: number,
    request: ConversationRequest,
    sent: number,
    actual: number,
  ): { key: string; memory: ConversationLesson } {
    const before = this.#conversations.get(key)
    const ratios = [...(before?.ratios ?? []), ratio].slice(-conversationWindow)
    const density = densityOf(request, sent, actual)
    const densities = [...(before?.densities ?? []), ...(density === undefined ? [] : [density])].slice(
      -conversationWindow,
    )
    const known = density === undefined ? {} : { reference: request.reference as number }
    const memory = {
      ratios,
      unedited: request.unedited,
      sent,
      ...known,
      ...(densities.length > 0 ? { densities } : {}),
    }
    this.#keepConversation(key, memory)
    return { key, memory }
  }

  #keepConversation(key: string, memory: ConversationLesson): void {
    this.#conversations.delete(key)
    this.#conversations.set(key, memory)
    if (this.#conversations.size > maxConversations)
      this.#conversations.delete(this.#conversations.keys().next().value as string)
  }

  #remember(key: string, limit: number): void {
    this.#limits.delete(key)
    this.#limits.set(key, { limit, learnedAt: this.#aging?.now() ?? 0 })
    if (this.#limits.size > maxLimits) this.#limits.delete(this.#limits.keys().next().value as string)
  }
}

/** The model-wide factor and, once the conversation has been answered, what it taught (see `Calibration.factor`). */
export interface FactorInputs {
  readonly modelWide: number
  readonly own?: ConversationLesson
}

/** `Calibration.factor` from its snapshot: pure, so a worker thread sizes a request exactly as the main thread would. */
export function factorFrom(inputs: FactorInputs, conversation?: ConversationRequest): number {
  const { modelWide, own } = inputs
  if (!own || conversation === undefined) return modelWide
  // What went upstream last time is sent again as it was (frozen edits): its newest ratio is its count.
  const known = (own.ratios[own.ratios.length - 1] ?? modelWide) * conversationMargin
  const added = addedShare(own, conversation.unedited, conversation.sentAfterEdits)
  const prior = Math.max(known, modelWide, defaultFactor)
  // New content is under only if it is harder than the conversation so far by the estimate's measure
  // and by the reference vocabulary's, and never sized above the prior.
  const reference = referenceRatio(own, conversation)
  const fresh = reference === undefined ? prior : Math.min(prior, Math.max(known, reference))
  return known * (1 - added) + fresh * added
}

/** The newest actual ÷ estimate ratio, no margin: the start point (a floor, not a limit) is judged on the count. */
export const countFactorFrom = (inputs: FactorInputs): number | undefined => inputs.own?.ratios.at(-1)

/**
 * Tokens per estimated token for what the client added since the newest answer, by the reference
 * vocabulary: its count of the added content × the conversation's highest actual ÷ reference ratio ×
 * the margin. Undefined without both counts, or when the counts say nothing sensible.
 */
function referenceRatio(own: ConversationLesson, conversation: ConversationRequest): number | undefined {
  const density = own.densities === undefined || own.densities.length === 0 ? undefined : Math.max(...own.densities)
  const reference = conversation.reference
  if (density === undefined || reference === undefined || !(reference > 0)) return undefined
  const growth = conversation.unedited - own.unedited
  // A smaller prompt than then (the client rewrote its history): all of it is new.
  const rewritten = growth < 0
  if (!rewritten && own.reference === undefined) return undefined
  const addedEstimate = rewritten ? conversation.unedited : growth
  const addedReference = rewritten ? reference : reference - (own.reference as number)
  if (!(addedEstimate > 0) || !(addedReference > 0)) return undefined
  return Math.max(minRatio, (density * referenceMargin * addedReference) / addedEstimate)
}

/**
 * Actual ÷ the reference count of what went upstream. The reference counted the unedited prompt;
 * what was sent is that at the same density (edits clear old content of the same mix, within a few
 * percent on the recordings: docs/estimates.md).
 */
function densityOf(request: ConversationRequest, sent: number, actual: number): number | undefined {
  const { reference, unedited } = request
  if (reference === undefined || !(reference > 0) || !(unedited > 0) || !Number.isFinite(reference)) return undefined
  return clampRatio(actual / ((sent * reference) / unedited))
}

/**
 * Share of the next request the upstream has not counted for this conversation: what the client
 * added since its newest answered request, over what went upstream then plus that (frozen edits
 * stay, so the rest is sent as it was), or over what goes upstream after this request's own edits. A prompt smaller than then means the client rewrote its
 * history (its own compaction, say): all of it counts as new.
 */
function addedShare(answered: ConversationLesson, unedited: number, sentAfterEdits?: number): number {
  const added = unedited - answered.unedited
  if (!Number.isFinite(added) || added < 0) return 1
  if (added === 0) return 0
  const sent = answered.sent + added
  // Edits made on this request take old content out, never the new: what is left is more new.
  const after = sentAfterEdits !== undefined && Number.isFinite(sentAfterEdits) ? Math.min(sent, sentAfterEdits) : sent
  return Math.min(1, added / Math.max(after, Number.MIN_VALUE))
}

/** A conversation's memory read back from a store, bounded like one learned here; anything malformed is none. */
function wellFormed(memory: ConversationLesson | undefined): ConversationLesson | undefined {
  if (!memory || !Array.isArray(memory.ratios)) return undefined
  const ratios = memory.ratios.filter((ratio) => typeof ratio === 'number' && Number.isFinite(ratio))
  const { unedited, sent, reference } = memory
  if (ratios.length === 0 || !(Number.isFinite(unedited) && unedited >= 0) || !(Number.isFinite(sent) && sent > 0))
    return undefined
  const lesson = { ratios: ratios.slice(-conversationWindow).map(clampRatio), unedited, sent }
  const densities = Array.isArray(memory.densities)
    ? memory.densities.filter((value) => typeof value === 'number' && Number.isFinite(value))
    : []
  // Without a well-formed reference count the densities say nothing: the prior sizes new content.
  if (!(typeof reference === 'number' && Number.isFinite(reference) && reference > 0) || densities.length === 0)
    return lesson
  return { ...lesson, reference, densities: densities.slice(-conversationWindow).map(clampRatio) }
}

function clampRatio(ratio: number): number {
  return Number.isFinite(ratio) ? Math.min(maxRatio, Math.max(minRatio, ratio)) : 1
}

/**
 * Where a model's shared ratios live: per tenant when clients authenticate (one tenant's hard-to-
 * estimate content never tightens another's budget), else one pool for all (without client auth
 * every client is trusted alike; see the README's trust model).
 */
function ratioKey(family: string, scope: string | undefined): string {
  return scope?.startsWith('tenant:') ? `${scope}\n${family}` : family
}
