/**
 * Adds top-level fields to a JSON object given as bytes, without parsing and re-writing the rest:
 * a round trip through JSON.parse would round `9007199254740993` and turn `1e400` into `null`.
 * The new fields go right after the opening brace; every other byte stays as the client wrote it.
 * The caller guarantees `original` is one JSON object that has none of these fields yet.
 */
export function addJsonFields(original: Buffer, fields: Readonly<Record<string, unknown>>): Buffer {
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined)
  const brace = original.indexOf(0x7b)
  if (entries.length === 0 || brace === -1) return original
  const written = entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')
  const separator = startsWithClosingBrace(original, brace + 1) ? '' : ','
  return Buffer.concat([
    original.subarray(0, brace + 1),
    Buffer.from(written + separator),
    original.subarray(brace + 1),
  ])
}

/** JSON whitespace is space, tab, LF and CR. */
function startsWithClosingBrace(bytes: Buffer, from: number): boolean {
  for (let index = from; index < bytes.length; index++) {
    const byte = bytes[index]
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue
    return byte === 0x7d
  }
  return false
}

/**
 * The fields `out` adds to `original` when that is all it changes (every field of `original` still
 * holds the very same value); undefined when anything else changed.
 */
export function fieldsAddedOnly(
  original: Readonly<Record<string, unknown>>,
  out: Readonly<Record<string, unknown>>,
): Record<string, unknown> | undefined {
  for (const key of Object.keys(original)) if (!Object.hasOwn(out, key) || out[key] !== original[key]) return undefined
  const added: Record<string, unknown> = {}
  for (const key of Object.keys(out)) if (!Object.hasOwn(original, key)) added[key] = out[key]
  return added
}
