/**
 * Small scanners over JSON, shared by the parsers that work on a body's bytes rather than its value:
 * over its text, or over its UTF-8 bytes (the `InBytes` forms). In UTF-8 every byte of
 * a character past ASCII is 0x80 or more, so the quotes, brackets, commas and spaces a scan looks for
 * are found at the same places in the bytes as in the text, at byte offsets.
 */

/** One past the closing quote of the string opening at `start`; -1 if it never closes. */
export function endOfJsonString(text: string, start: number): number {
  for (let quote = text.indexOf('"', start + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return quote + 1
  }
  return -1
}

/** The first offset from `from` that is not JSON whitespace (space, tab, LF, CR). */
export function skipJsonSpaceInBytes(bytes: Uint8Array, from: number): number {
  let index = from
  for (;;) {
    const code = bytes[index]
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return index
    index++
  }
}

/** One past the closing quote of the string opening at `start`; -1 if it never closes. */
export function endOfJsonStringInBytes(bytes: Buffer, start: number): number {
  for (let quote = bytes.indexOf(0x22, start + 1); quote !== -1; quote = bytes.indexOf(0x22, quote + 1)) {
    let backslashes = 0
    while (bytes[quote - 1 - backslashes] === 0x5c) backslashes++
    if (backslashes % 2 === 0) return quote + 1
  }
  return -1
}
