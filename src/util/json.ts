/** A parsed JSON object. */
export type Json = Record<string, unknown>

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
