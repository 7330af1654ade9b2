import type { SessionTotals } from './accounting.ts'
import type { Arm } from './holdout-arm.ts'

/** One arm's finished sessions of one kind, each figure per session. */
export interface ArmSummary {
  readonly sessions: number
  readonly medianBilledTokens: number | null
  /** A distribution-free 95% interval of that median (order statistics); null below `minSessions`. */
  readonly billedInterval: readonly [number, number] | null
  readonly medianDollars: number | null
  readonly medianRequests: number | null
  readonly medianDurationSeconds: number | null
  /** Cache reads over all prompt tokens, the median over sessions. */
  readonly medianCacheReadShare: number | null
  readonly lengthRefusals: number
  readonly clientCompactions: number
  readonly clientErrors: number
}

/** The two arms of one kind side by side, and what the treated arm saved on the median session. */
export interface KindComparison {
  readonly kind: string
  readonly models: readonly string[]
  readonly control: ArmSummary
  readonly treated: ArmSummary
  /** 1 − treated median ÷ control median of billed input, with a 95% bootstrap interval; null until both arms have `minSessions`. */
  readonly saving: { readonly median: number; readonly interval: readonly [number, number] } | null
  readonly verdict: string
  /** Finished sessions left out because an answer carried no usage (a Chat stream that asked for none, an error). */
  readonly unmetered: number
}

/**
 * Fewest finished sessions per arm before an interval is shown: with fewer than 6 no order statistic
 * brackets a median at 95% (2 × 0.5^5 > 0.05), so any interval would be made up.
 */
export const minSessions = 6

const notEnough = 'not enough sessions yet'

/**
 * The arms compared per session kind, over finished sessions only (idle for `finishedAfterMs`): a
 * session still running would be counted short. Sessions without an arm (no holdout) are left out.
 */
export function compareArms(
  sessions: readonly SessionTotals[],
  now: number,
  finishedAfterMs: number,
): KindComparison[] {
  const byKind = new Map<string, KindSessions>()
  for (const session of sessions) {
    if (session.arm === undefined || now - Date.parse(session.lastSeen) < finishedAfterMs) continue
    const kind = session.kind ?? 'unknown'
    const entry = byKind.get(kind) ?? { models: new Set<string>(), control: [], treated: [], unmetered: 0 }
    for (const model of session.models) entry.models.add(model)
    // A session with an answer of unknown size would count short: left out, and said so.
    if ((session.unmeteredTurns ?? 0) > 0) entry.unmetered++
    else entry[session.arm].push(session)
    byKind.set(kind, entry)
  }
  return [...byKind.entries()].map(([kind, entry]) => ({
    ...compareKind(kind, [...entry.models], entry),
    unmetered: entry.unmetered,
  }))
}

interface KindSessions {
  readonly models: Set<string>
  readonly control: SessionTotals[]
  readonly treated: SessionTotals[]
  unmetered: number
}

function compareKind(
  kind: string,
  models: readonly string[],
  arms: Readonly<Record<Arm, readonly SessionTotals[]>>,
): Omit<KindComparison, 'unmetered'> {
  const control = summarize(arms.control)
  const treated = summarize(arms.treated)
  const enough = control.sessions >= minSessions && treated.sessions >= minSessions
  const saving = enough ? savingOf(arms.control.map(billed), arms.treated.map(billed)) : null
  const verdict = saving
    ? `${percent(saving.median)} less billed input per session (95% interval ${percent(saving.interval[0])} to ${percent(saving.interval[1])})`
    : `${notEnough} (${control.sessions} control, ${treated.sessions} treated; ${minSessions} of each needed)`
  return { kind, models, control, treated, saving, verdict }
}

const billed = (session: SessionTotals): number => session.billedTokens

function summarize(sessions: readonly SessionTotals[]): ArmSummary {
  const billedTokens = sorted(sessions.map(billed))
  return {
    sessions: sessions.length,
    medianBilledTokens: median(billedTokens),
    billedInterval: medianInterval(billedTokens),
    medianDollars: median(sorted(sessions.map((session) => session.dollars))),
    medianRequests: median(sorted(sessions.map((session) => session.turns))),
    medianDurationSeconds: median(
      sorted(sessions.map((session) => (Date.parse(session.lastSeen) - Date.parse(session.firstSeen)) / 1000)),
    ),
    medianCacheReadShare: median(
      sorted(sessions.filter((s) => s.promptTokens > 0).map((s) => s.cacheReadTokens / s.promptTokens)),
    ),
    lengthRefusals: sum(sessions, 'lengthRefusals'),
    clientCompactions: sum(sessions, 'clientCompactions'),
    clientErrors: sum(sessions, 'clientErrors'),
  }
}

function sum(sessions: readonly SessionTotals[], field: 'lengthRefusals' | 'clientCompactions' | 'clientErrors') {
  return sessions.reduce((total, session) => total + (session[field] ?? 0), 0)
}

function sorted(values: readonly number[]): number[] {
  return values.filter(Number.isFinite).toSorted((a, b) => a - b)
}

export function median(ascending: readonly number[]): number | null {
  const count = ascending.length
  if (count === 0) return null
  const middle = Math.floor(count / 2)
  return count % 2 === 1
    ? (ascending[middle] as number)
    : ((ascending[middle - 1] as number) + (ascending[middle] as number)) / 2
}

/**
 * The 95% interval of a median from order statistics: the k-th smallest and k-th largest, for the
 * largest k with P(Binomial(n, ½) < k) ≤ 2.5%. Null when no such k exists (n < 6).
 */
export function medianInterval(ascending: readonly number[]): readonly [number, number] | null {
  const count = ascending.length
  let below = 0
  let k = 0
  for (let j = 0; j < count; j++) {
    below += binomialHalf(count, j)
    if (below > 0.025) break
    k = j + 1
  }
  if (k === 0) return null
  return [ascending[k - 1] as number, ascending[count - k] as number]
}

function binomialHalf(n: number, j: number): number {
  let log = -n * Math.LN2
  for (let i = 1; i <= j; i++) log += Math.log(n - j + i) - Math.log(i)
  return Math.exp(log)
}

/** Resamples for the interval of the saving: enough for a stable 2.5th and 97.5th percentile. */
const resamples = 2_000

/**
 * The saving on the median session and a percentile-bootstrap 95% interval, each arm resampled on
 * its own; the generator is seeded from the data, so the same sessions always give the same interval.
 */
export function savingOf(
  control: readonly number[],
  treated: readonly number[],
): { median: number; interval: readonly [number, number] } | null {
  const controlMedian = median(sorted(control))
  const treatedMedian = median(sorted(treated))
  if (controlMedian === null || treatedMedian === null || controlMedian <= 0) return null
  const random = seeded(control.length * 7919 + treated.length * 104_729 + Math.round(controlMedian))
  const draws: number[] = []
  for (let index = 0; index < resamples; index++) {
    const c = median(sorted(resample(control, random))) as number
    const t = median(sorted(resample(treated, random))) as number
    if (c > 0) draws.push(1 - t / c)
  }
  draws.sort((a, b) => a - b)
  const at = (share: number): number => draws[Math.min(draws.length - 1, Math.floor(share * draws.length))] as number
  return { median: 1 - treatedMedian / controlMedian, interval: [at(0.025), at(0.975)] }
}

function resample(values: readonly number[], random: () => number): number[] {
  return values.map(() => values[Math.floor(random() * values.length)] as number)
}

/** mulberry32: small, fast and good enough to resample with. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let mixed = Math.imul(state ^ (state >>> 15), state | 1)
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61)
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296
  }
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`
}
