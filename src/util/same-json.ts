/**
 * Two parsed JSON values are the same JSON: equal primitives, or arrays and objects with the same
 * members in the same order (order matters to anything that serializes them). Identical
 * references answer at once, so values the parse memo shares cost one comparison.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let index = 0; index < a.length; index++) if (!sameJson(a[index], b[index])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const keysA = Object.keys(a)
  const keysB = Object.keys(b)
  if (keysA.length !== keysB.length) return false
  for (let index = 0; index < keysA.length; index++) {
    const key = keysA[index] as string
    if (key !== keysB[index]) return false
    if (!sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false
  }
  return true
}
