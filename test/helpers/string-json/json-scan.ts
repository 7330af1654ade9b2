/** The string scanners of main at 4975aea (see splice-json.ts and json-members.ts beside this file). */
/** Small scanners over JSON text, shared by the parsers that work on a body's bytes rather than its value. */

/** The first index from `from` that is not JSON whitespace (space, tab, LF, CR). */
export function skipJsonSpace(text: string, from: number): number {
  let index = from
  for (;;) {
    const code = text.charCodeAt(index)
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return index
    index++
  }
}

/** One past the closing quote of the string opening at `start`; -1 if it never closes. */
export function endOfJsonString(text: string, start: number): number {
  for (let quote = text.indexOf('"', start + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return quote + 1
  }
  return -1
}
