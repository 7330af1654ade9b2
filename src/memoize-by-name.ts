/**
 * A function of a name a client sent (a model name), remembered: asked on every request with a
 * handful of distinct names, it computes once per name. Names come from clients, so at most
 * `limit` are kept; when full, the lot is dropped and relearned.
 */
export function memoizeByName<T>(compute: (name: string) => T, limit = 1_000): (name: string) => T {
  const known = new Map<string, T>()
  return (name) => {
    if (known.has(name)) return known.get(name) as T
    const value = compute(name)
    if (known.size >= limit) known.clear()
    known.set(name, value)
    return value
  }
}
