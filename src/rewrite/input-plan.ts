/**
 * The planner's part for old tool inputs (docs/quality.md, "Old tool inputs"): frozen clears are
 * applied again while the client sends the same input, and when a request is over budget the long
 * strings of calls older than the newest rounds kept whole are cleared (cleared-input.ts), oldest
 * first, in batches, at their place in the risk order (plan.ts). Call ids, names and pairing stay.
 */
import { clearedInput, type ClearableInput } from './cleared-input.ts'
import type { TokenEstimator } from './estimate.ts'
import { hashText } from './hash.ts'
import type { PlanInput } from './plan-input.ts'
import { roundsNewerThan, type Rounds } from './rounds.ts'
import { supersededWrites } from './superseded-input.ts'
import type { ClearToolInput, FrozenDecisions, FrozenInput } from './types.ts'

/** Where old inputs go in the forced order (plan.ts): before the results of this rank, after those of lower ones. */
export const inputClearRank = 2

/** One call whose input the adapter can clear. */
interface InputCall {
  readonly id: string
  readonly message: number
  readonly name: string
  readonly clearable: ClearableInput
}

/** What clearing one input does: the identity of the input, what replaces it and the tokens that saves. */
interface Clearing {
  readonly hash: string
  /** Undefined: nothing in it is long enough to clear. */
  readonly cleared: unknown
  readonly saved: number
}

export interface InputReplacement {
  readonly edit: ClearToolInput
  readonly message: number
  readonly hash: string
  readonly fresh: boolean
  readonly saved: number
}

export class InputClearing {
  readonly #input: PlanInput
  readonly #rounds: Rounds
  /** Read from the messages only when needed: most requests neither hold a frozen input nor go over budget. */
  #callsRead: readonly InputCall[] | undefined
  readonly #frozen: ReadonlyMap<string, FrozenInput>
  readonly #replacements = new Map<string, InputReplacement>()
  /** Applies a change of `delta` tokens to one message (the planner's running total). */
  readonly #adjust: (message: number, delta: number) => void
  clientEdited = false

  constructor(input: PlanInput, rounds: Rounds, adjust: (message: number, delta: number) => void) {
    this.#input = input
    this.#rounds = rounds
    this.#adjust = adjust
    this.#frozen = frozenInputs(input.decisions)
  }

  /** Inputs cleared on an earlier request go out cleared again, the same bytes, while the client sends the same input. */
  reapply(): void {
    if (this.#frozen.size === 0) return
    for (const call of this.#calls) {
      const frozen = this.#frozen.get(call.id)
      if (frozen === undefined) continue
      const clearing = clearingOf(call, this.#input.estimator)
      if (clearing.hash !== frozen.hash || clearing.cleared === undefined) this.clientEdited = true
      else this.#clear(call, clearing, false)
    }
  }

  /**
   * Clears the inputs of calls older than the newest `keepRecentRounds` (and never the newest
   * message's), oldest first, `clearBatch` at a time, while `over()` holds (when the policy allows;
   * under `superseded`, only writes whose file a later call writes again). Messages dropped, and
   * those behind the previous request's cache marker, are left alone.
   */
  clearOld(over: () => boolean, isDropped: (message: number) => boolean): void {
    const { keepRecentRounds, clearBatch, clearToolInputs } = this.#input.policy
    if (clearToolInputs === false) return
    const editableFrom = this.#input.editableFrom ?? 0
    const skip = (message: number): boolean => isDropped(message) || message < editableFrom
    const newest = this.#input.view.messages.length - 1
    let inBatch = 0
    let superseded: ReadonlySet<string> | undefined
    for (const call of this.#calls) {
      if (inBatch === 0 && !over()) return
      if (this.#replacements.has(call.id) || call.message >= newest || skip(call.message)) continue
      // Found once, and only when a clear is wanted: most requests are never over budget.
      if (clearToolInputs === 'superseded' && !(superseded ??= supersededWrites(this.#calls)).has(call.id)) continue
      if (roundsNewerThan(this.#rounds, call.id, call.message) < Math.max(1, keepRecentRounds)) continue
      const clearing = clearingOf(call, this.#input.estimator)
      if (clearing.cleared === undefined || clearing.saved <= 0) continue
      this.#clear(call, clearing, true)
      inBatch = (inBatch + 1) % clearBatch
    }
  }

  edits(): ClearToolInput[] {
    return [...this.#replacements.values()].map((replacement) => replacement.edit)
  }

  replacements(): Iterable<InputReplacement> {
    return this.#replacements.values()
  }

  /** The record for the next request: every input cleared, with the request that first cleared it. */
  decisions(): Pick<FrozenDecisions, 'inputs'> {
    if (this.#replacements.size === 0) return {}
    const inputs: Record<string, FrozenInput> = {}
    for (const [id, { hash, fresh }] of this.#replacements) {
      const at = fresh ? this.#input.request : this.#frozen.get(id)?.at
      // Own properties only (`__proto__` included), as sessions are stored.
      Object.defineProperty(inputs, id, {
        value: { hash, ...(typeof at === 'number' ? { at } : {}) },
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return { inputs }
  }

  get #calls(): readonly InputCall[] {
    return (this.#callsRead ??= callsWithInputs(this.#input.view))
  }

  #clear(call: InputCall, clearing: Clearing, fresh: boolean): void {
    this.#adjust(call.message, -clearing.saved)
    this.#replacements.set(call.id, {
      edit: { kind: 'clear-tool-input', id: call.id, input: clearing.cleared },
      message: call.message,
      hash: clearing.hash,
      fresh,
      saved: clearing.saved,
    })
  }
}

/** The stored input clears as a Map of own entries; a malformed store entry counts as none. */
export function frozenInputs(decisions: FrozenDecisions): Map<string, FrozenInput> {
  const inputs: unknown = decisions.inputs
  if (typeof inputs !== 'object' || inputs === null) return new Map()
  return new Map(
    Object.entries(inputs as Record<string, FrozenInput>).filter(
      ([, entry]) => typeof entry === 'object' && entry !== null && typeof entry.hash === 'string',
    ),
  )
}

/** Every call whose input the adapter can write back cleared, in conversation order. */
function callsWithInputs(view: PlanInput['view']): InputCall[] {
  const calls: InputCall[] = []
  view.messages.forEach((message, index) => {
    const clearable = message.toolCallClearable
    if (clearable === undefined) return
    message.toolCallIds.forEach((id, position) => {
      const entry = clearable[position]
      if (entry !== undefined)
        calls.push({ id, message: index, name: message.toolCallNames?.[position] ?? '', clearable: entry })
    })
  })
  return calls
}

/** Clearings of inputs the parser shares across requests (frozen objects), per estimator: a frozen clear costs no walk. */
const sharedClearings = new WeakMap<TokenEstimator, WeakMap<object, Clearing>>()
/** String inputs (OpenAI's JSON arguments, patches) by their hash: the same bytes clear the same way. */
const clearingsByHash = new Map<string, Clearing>()
const maxClearingsByHash = 5_000

function clearingOf(call: InputCall, estimator: TokenEstimator): Clearing {
  const { value } = call.clearable
  if (typeof value === 'object' && value !== null && Object.isFrozen(value)) {
    let known = sharedClearings.get(estimator)
    if (known === undefined) sharedClearings.set(estimator, (known = new WeakMap()))
    const clearing = known.get(value) ?? clearingFrom(call, estimator)
    known.set(value, clearing)
    return clearing
  }
  if (typeof value !== 'string') return clearingFrom(call, estimator)
  const hash = inputHash(call.clearable)
  const key = `${hash}\u0000${call.name}`
  const known = clearingsByHash.get(key)
  if (known !== undefined) return known
  const clearing = clearingFrom(call, estimator, hash)
  clearingsByHash.set(key, clearing)
  if (clearingsByHash.size > maxClearingsByHash) clearingsByHash.delete(clearingsByHash.keys().next().value as string)
  return clearing
}

function clearingFrom(call: InputCall, estimator: TokenEstimator, hash = inputHash(call.clearable)): Clearing {
  const cleared = clearedInput(call.name, call.clearable)
  const saved = cleared === undefined ? 0 : estimator.value(call.clearable.value ?? {}) - estimator.value(cleared)
  return { hash, cleared, saved }
}

/** The input's identity: a frozen clear applies only to the same bytes in the same form. */
function inputHash(input: ClearableInput): string {
  const text = typeof input.value === 'string' ? input.value : (JSON.stringify(input.value) ?? '')
  return hashText(`${input.form}\u0000${text}`)
}

/** Tokens the frozen input clears take off each message (for the economy's sizes, economy/from-view.ts). */
export function frozenInputSavings(
  view: PlanInput['view'],
  decisions: FrozenDecisions,
  estimator: TokenEstimator,
): Map<number, number> {
  const saved = new Map<number, number>()
  const frozen = frozenInputs(decisions)
  if (frozen.size === 0) return saved
  for (const call of callsWithInputs(view)) {
    const hash = frozen.get(call.id)?.hash
    if (hash === undefined) continue
    const clearing = clearingOf(call, estimator)
    if (clearing.hash === hash && clearing.cleared !== undefined)
      saved.set(call.message, (saved.get(call.message) ?? 0) + clearing.saved)
  }
  return saved
}
