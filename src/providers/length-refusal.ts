import { isJsonObject } from '../util/json.ts'

/**
 * An upstream refused a request for its length. The numbers are there only when its own message
 * gives them: the prompt size it measured and the limit it enforces. An empty object still means
 * "too long".
 */
export interface LengthRefusal {
  readonly actualTokens?: number
  readonly limit?: number
}

/** Reads a 400 body; undefined when it is not a length refusal. */
export type LengthRefusalParser = (body: Buffer) => LengthRefusal | undefined

/** A refusal that arrives inside a 200 stream, after events that carry no content yet. */
export interface StreamRefusalReader {
  /** Event types that may come before the refusal and say nothing (held back until the next one). */
  readonly preamble: ReadonlySet<string>
  /** Reads one event's data; undefined when it is not a length refusal. */
  readonly read: (data: string) => LengthRefusal | undefined
}

/**
 * The provider's own `error` object of an error body, or undefined when the body is not JSON of
 * that shape. Only its fields are read: the rest of a 400 may echo the client's text.
 */
export function errorObjectOf(body: Buffer): Readonly<Record<string, unknown>> | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
  return isJsonObject(parsed) && isJsonObject(parsed['error']) ? parsed['error'] : undefined
}

/** A count as the upstream printed it: digits only, within the safe integer range. */
export function tokenCount(digits: string | undefined): number | undefined {
  if (digits === undefined) return undefined
  const value = Number(digits)
  return Number.isSafeInteger(value) ? value : undefined
}
