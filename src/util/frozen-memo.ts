import type { Json } from './json.ts'

/**
 * `read`, remembered per object for objects that are frozen: the parser shares frozen messages
 * across requests (util/parse-carry.ts), and what is read from one cannot change under the memo.
 * Objects not frozen are read every time.
 */
export function memoOnFrozen<T>(read: (message: Json) => T): (message: Json) => T {
  const known = new WeakMap<object, T>()
  return (message) => {
    if (!Object.isFrozen(message)) return read(message)
    if (known.has(message)) return known.get(message) as T
    const value = read(message)
    known.set(message, value)
    return value
  }
}
