/** A parsed JSON object. */
export type Json = Record<string, unknown>

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A finite number, or 0 for anything else (usage fields an upstream left out or nulled). */
export function numberOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}
