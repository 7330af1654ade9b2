/**
 * How long finished sessions of each kind ran (their request counts), newest last: the cadence
 * estimator's evidence of how many more requests a session of that kind will probably send.
 */

/** Finished sessions remembered per kind: enough for a mean, small in every store. */
export const finishedKept = 50
/** Kinds remembered per process by the memory store; the least recently finished go first. */
export const finishedKindsKept = 1_000

export class FinishedSessions {
  readonly #byKind = new Map<string, number[]>()
  readonly #kindsKept: number

  constructor(kindsKept = finishedKindsKept) {
    this.#kindsKept = kindsKept
  }

  record(kind: string, requests: number): void {
    if (!isLength(requests)) return
    const lengths = this.#byKind.get(kind) ?? []
    lengths.push(requests)
    if (lengths.length > finishedKept) lengths.shift()
    this.#byKind.delete(kind)
    this.#byKind.set(kind, lengths)
    if (this.#byKind.size > this.#kindsKept) this.#byKind.delete(this.#byKind.keys().next().value as string)
  }

  /** A copy: the kept list moves on as other sessions finish. */
  lengths(kind: string): readonly number[] {
    return [...(this.#byKind.get(kind) ?? [])]
  }

  kinds(): number {
    return this.#byKind.size
  }
}

/** Request counts read back from a store: whole, positive, at most `finishedKept`; anything else is dropped. */
export function finishedLengthsOf(values: unknown): number[] {
  if (!Array.isArray(values)) return []
  return values
    .map((value) => (typeof value === 'string' ? Number(value) : value))
    .filter(isLength)
    .slice(-finishedKept)
}

function isLength(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}
