/**
 * How a session moves: how fast its prompt grows, how long it pauses, how many more requests it
 * will probably send. Pure: the session store hands in what it kept, nothing is read from a clock.
 */
import { cadenceHistory } from './cadence-memory.ts'

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
  /** The low quantile of the remaining length a batch must pay back within (default `forecastQuantile`). */
  readonly quantile?: number
  /** Requests ahead the average counts at least up to (default `cadenceHistory`, the payback cap). */
  readonly averageCap?: number
}

export interface Cadence {
  readonly requestsSoFar: number
  /** Requests still to come after the current one (expected). */
  readonly expectedRemaining: number
  /** Requests still to come that the session reaches with high probability (a low quantile): what a batch must pay back within. */
  readonly conservativeRemaining: number
  /**
   * Requests still to come on average, each session's counted up to the longer of `averageCap` and the
   * conservative forecast: what a batch must clearly pay over (decide.ts).
   */
  readonly averageRemainingWithinCap: number
  /** Tokens the prompt grows by per request, before edits. */
  readonly growthPerRequest: number
  /** Share of gaps longer than 5 minutes: a 5-minute entry would have expired. */
  readonly pausesOver5m: number
  /** Share of gaps longer than an hour. */
  readonly pausesOver1h: number
}

/** A batch must pay back within the remaining length 70% of sessions like it reach (default; the policy may set its own). */
export const forecastQuantile = 0.3
/** Finished sessions needed before they outweigh the session's own history. */
export const finishedSessionsNeeded = 5
const fiveMinutes = 5 * 60_000
const oneHour = 60 * 60_000

export function estimateCadence(input: CadenceInput): Cadence {
  const conservative = conservativeRemaining(
    input.requestsSoFar,
    input.finishedLengths,
    input.quantile ?? forecastQuantile,
  )
  return {
    requestsSoFar: input.requestsSoFar,
    expectedRemaining: expectedRemaining(input.requestsSoFar, input.finishedLengths),
    conservativeRemaining: conservative,
    averageRemainingWithinCap: averageRemainingWithin(
      input.requestsSoFar,
      input.finishedLengths,
      Math.max(input.averageCap ?? cadenceHistory, conservative),
    ),
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

/**
 * A session that has lasted n requests gets at least this many more with probability 1 − q. With
 * nothing else known, the scale-free prior says P(more than r | lasted n) = n / (n + r), so its
 * q-quantile is n·q / (1 − q): at q = 0.25, a third of what the session has shown. Finished sessions of
 * the same kind that lasted past n give the quantile of their remaining lengths directly; they are
 * blended in by how many there are and take over from `finishedSessionsNeeded` on.
 */
export function conservativeRemaining(
  requestsSoFar: number,
  finishedLengths: readonly number[],
  quantile: number,
): number {
  const q = Math.min(0.99, Math.max(0.01, quantile))
  const prior = (Math.max(1, requestsSoFar) * q) / (1 - q)
  const longer = finishedLengths.filter((length) => length > requestsSoFar).map((length) => length - requestsSoFar)
  // Sessions of the kind that stopped by now count too: each says "no more" for a session like this one.
  const stopped = finishedLengths.filter((length) => length === requestsSoFar).length
  if (longer.length === 0) return prior
  const fitted = quantileOf([...longer, ...Array.from({ length: stopped }, () => 0)], q)
  const weight = Math.min(1, longer.length / finishedSessionsNeeded)
  return weight * fitted + (1 - weight) * prior
}

/**
 * The mean of min(requests still to come, cap). Under the scale-free prior P(more than r | lasted n) =
 * n / (n + r) that is n·ln(1 + cap / n); finished sessions of the same kind give it directly (those that
 * stopped by now count as 0), blended in as for the other two forecasts.
 */
export function averageRemainingWithin(requestsSoFar: number, finishedLengths: readonly number[], cap: number): number {
  const own = Math.max(1, requestsSoFar)
  const prior = own * Math.log1p(cap / own)
  const longer = finishedLengths.filter((length) => length > requestsSoFar)
  if (longer.length === 0) return prior
  const stopped = finishedLengths.filter((length) => length === requestsSoFar).length
  const fitted =
    longer.reduce((sum, length) => sum + Math.min(cap, length - requestsSoFar), 0) / (longer.length + stopped)
  const weight = Math.min(1, longer.length / finishedSessionsNeeded)
  return weight * fitted + (1 - weight) * prior
}

/** The q-quantile of the values (the lower of the two around it: never an optimistic interpolation). */
export function quantileOf(values: readonly number[], q: number): number {
  if (values.length === 0) return 0
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * (sorted.length - 1))))] as number
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
