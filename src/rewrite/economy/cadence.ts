/**
 * How a session moves: how fast its prompt grows, how long it pauses, how many more requests it
 * will probably send. Pure: the session store hands in what it kept, nothing is read from a clock.
 */

/** What the session store keeps per session (and per kind of session, for finished ones). */
export interface CadenceInput {
  /** Requests this session has sent, the current one included. */
  readonly requestsSoFar: number
  /** Tokens the unedited conversation grew by between consecutive requests, newest last (keep ~16). */
  readonly growth: readonly number[]
  /** Milliseconds between consecutive requests, newest last (keep ~16). */
  readonly gapsMs: readonly number[]
  /** Request counts of finished sessions of the same kind (same model family and head fingerprint). */
  readonly finishedLengths: readonly number[]
}

export interface Cadence {
  readonly requestsSoFar: number
  /** Requests still to come after the current one (expected). */
  readonly expectedRemaining: number
  /** Tokens the prompt grows by per request, before edits. */
  readonly growthPerRequest: number
  /** Share of gaps longer than 5 minutes: a 5-minute entry would have expired. */
  readonly pausesOver5m: number
  /** Share of gaps longer than an hour. */
  readonly pausesOver1h: number
}

/** Finished sessions needed before they outweigh the session's own history. */
export const finishedSessionsNeeded = 5
const fiveMinutes = 5 * 60_000
const oneHour = 60 * 60_000

export function estimateCadence(input: CadenceInput): Cadence {
  return {
    requestsSoFar: input.requestsSoFar,
    expectedRemaining: expectedRemaining(input.requestsSoFar, input.finishedLengths),
    growthPerRequest: median(input.growth.filter((value) => value > 0)),
    pausesOver5m: shareAbove(input.gapsMs, fiveMinutes),
    pausesOver1h: shareAbove(input.gapsMs, oneHour),
  }
}

/**
 * Expected requests after the current one. With nothing else known, a session that has lasted n
 * requests is as likely to be in its first half as its second (the scale-free "Lindy" estimate:
 * n more). Finished sessions of the same kind that lasted past n say directly how many more came
 * (the mean of their remaining lengths); they are blended in by how many there are and take over
 * from `finishedSessionsNeeded` on. Sessions that ended before n say nothing about one still going.
 */
export function expectedRemaining(requestsSoFar: number, finishedLengths: readonly number[]): number {
  const own = Math.max(1, requestsSoFar)
  const longer = finishedLengths.filter((length) => length > requestsSoFar)
  if (longer.length === 0) return own
  const fromFinished = longer.reduce((sum, length) => sum + length - requestsSoFar, 0) / longer.length
  const weight = Math.min(1, longer.length / finishedSessionsNeeded)
  return Math.max(1, weight * fromFinished + (1 - weight) * own)
}

function median(values: readonly number[]): number {
  if (values.length === 0) return 0
  const sorted = values.toSorted((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

function shareAbove(values: readonly number[], limit: number): number {
  return values.length === 0 ? 0 : values.filter((value) => value > limit).length / values.length
}
