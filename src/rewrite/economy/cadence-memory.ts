/**
 * What a session keeps between requests for the cadence estimator: the last few growths of its
 * unedited prompt and gaps between requests, the previous unedited size and the TTL its stable part
 * was written with. Plain numbers and strings, so the Redis store keeps it as JSON; anything
 * malformed read back counts as not kept.
 */
import type { CadenceInput } from './cadence.ts'

export interface CadenceMemory {
  /** Growth of the unedited prompt estimate between consecutive requests, newest last. */
  readonly growth?: readonly number[]
  /** Milliseconds between consecutive requests, newest last. */
  readonly gapsMs?: readonly number[]
  /** The previous request's unedited prompt estimate. */
  readonly unedited?: number
  /** TTL the stable part of the previous request was written with. */
  readonly cacheTtl?: '5m' | '1h'
}

/** Growths and gaps kept per session: enough for a median and a share, small in every store. */
export const cadenceHistory = 16

/** `finishedLengths`: request counts of finished sessions of the same kind, kept by the session store per kind. */
export function cadenceInputOf(
  memory: CadenceMemory | undefined,
  requestsSoFar: number,
  finishedLengths: readonly number[] = [],
): CadenceInput {
  return {
    requestsSoFar,
    growth: numbers(memory?.growth),
    gapsMs: numbers(memory?.gapsMs),
    finishedLengths,
  }
}

export interface CadenceStep {
  /** This request's unedited prompt estimate. */
  readonly unedited: number
  /** Time since the previous request; undefined on the first. */
  readonly gapMs: number | undefined
  readonly cacheTtl: '5m' | '1h'
}

export function nextCadenceMemory(memory: CadenceMemory | undefined, step: CadenceStep): CadenceMemory {
  const previous =
    typeof memory?.unedited === 'number' && Number.isFinite(memory.unedited) ? memory.unedited : undefined
  const growth =
    previous === undefined ? numbers(memory?.growth) : bounded(numbers(memory?.growth), step.unedited - previous)
  const gapsMs = step.gapMs === undefined ? numbers(memory?.gapsMs) : bounded(numbers(memory?.gapsMs), step.gapMs)
  return { growth, gapsMs, unedited: step.unedited, cacheTtl: step.cacheTtl }
}

function bounded(values: readonly number[], next: number): number[] {
  return [...values, Math.round(next)].slice(-cadenceHistory)
}

function numbers(value: unknown): number[] {
  return Array.isArray(value)
    ? value
        .filter((entry): entry is number => typeof entry === 'number' && Number.isFinite(entry))
        .slice(-cadenceHistory)
    : []
}
