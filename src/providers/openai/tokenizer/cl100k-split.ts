/**
 * cl100k_base's pre-tokenizer as a loop over char codes: where each piece of its split regex ends
 * (gpt-tokenizer's CL100K_TOKEN_SPLIT_PATTERN, tiktoken's own):
 *   '(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *    ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s
 * The Unicode regex spends about two thirds of a count splitting; a class table does it several
 * times faster. Characters outside the Basic Multilingual Plane (emoji, some letters) are left to the
 * regex itself: a piece whose end depends on one is reported as unknown (-1).
 */
const ASTRAL = 0
const LETTER = 1
const DIGIT = 2
const SPACE = 3
const NEWLINE = 4
const OTHER = 5

let classes: Uint8Array | undefined

/** The regex's own classes for every UTF-16 unit, built once (~65k regex tests), when the vocabulary loads. */
export function classTable(): Uint8Array {
  if (classes) return classes
  const table = new Uint8Array(65_536)
  const letter = /\p{L}/u
  const digit = /\p{N}/u
  const space = /\s/u
  for (let code = 0; code < 65_536; code++) {
    const char = String.fromCharCode(code)
    if (code >= 0xd800 && code <= 0xdfff) table[code] = ASTRAL
    else if (code === 10 || code === 13) table[code] = NEWLINE
    else if (letter.test(char)) table[code] = LETTER
    else if (digit.test(char)) table[code] = DIGIT
    else table[code] = space.test(char) ? SPACE : OTHER
  }
  classes = table
  return table
}

/** Length of the contraction (`'s`, `'ll`, …, any case) at `start`, or 0. */
function contraction(text: string, start: number): number {
  // `| 32` lowers an ASCII letter and maps no other character onto one.
  const first = text.charCodeAt(start + 1) | 32
  if (first === 115 || first === 100 || first === 109 || first === 116) return 2
  const second = text.charCodeAt(start + 2) | 32
  if ((first === 108 && second === 108) || (first === 118 && second === 101) || (first === 114 && second === 101))
    return 3
  return 0
}

/** Where the run of `kind` from `from` ends, or -1 if an astral character may belong to it. */
function runEnd(table: Uint8Array, text: string, from: number, kind: number): number {
  let end = from
  while (end < text.length) {
    const next = table[text.charCodeAt(end)] as number
    if (next === kind) end++
    else if (next === ASTRAL) return -1
    else break
  }
  return end
}

/** `\s+$|\s*[\r\n]|\s+(?!\S)|\s` from a whitespace character at `start`. */
function spaceEnd(table: Uint8Array, text: string, start: number): number {
  let end = start
  let lastNewline = -1
  // Astral characters are never whitespace: they end the run like any other.
  for (; end < text.length; end++) {
    const kind = table[text.charCodeAt(end)] as number
    if (kind === NEWLINE) lastNewline = end
    else if (kind !== SPACE) break
  }
  if (end === text.length) return end
  if (lastNewline >= 0) return lastNewline + 1
  return end - start >= 2 ? end - 1 : start + 1
}

/** End of the piece that starts at `start` (< text.length), or -1 when an astral character decides it. */
export function pieceEnd(text: string, start: number): number {
  const table = classTable()
  const kind = table[text.charCodeAt(start)] as number
  if (kind === ASTRAL) return -1
  const code = text.charCodeAt(start)
  if (code === 39 && start + 1 < text.length) {
    const length = contraction(text, start)
    if (length > 0) return start + length
  }
  const next = start + 1 < text.length ? (table[text.charCodeAt(start + 1)] as number) : -1
  if (kind === LETTER) return runEnd(table, text, start + 1, LETTER)
  // One character that is not a line break, letter or digit may lead a run of letters.
  if (kind !== NEWLINE && kind !== DIGIT) {
    if (next === LETTER) return runEnd(table, text, start + 2, LETTER)
    if (next === ASTRAL) return -1
  }
  if (kind === DIGIT) return digitGroupEnd(table, text, start)
  if (kind === OTHER || (code === 32 && next === OTHER)) {
    const end = runEnd(table, text, kind === OTHER ? start + 1 : start + 2, OTHER)
    if (end < 0) return -1
    let after = end
    while (after < text.length && table[text.charCodeAt(after)] === NEWLINE) after++
    return after
  }
  return spaceEnd(table, text, start)
}

/** `\p{N}{1,3}` when the digit run meets an astral character: unknown only if it is within the three. */
function digitGroupEnd(table: Uint8Array, text: string, start: number): number {
  let end = start + 1
  while (end < start + 3 && end < text.length) {
    const kind = table[text.charCodeAt(end)] as number
    if (kind === ASTRAL) return -1
    if (kind !== DIGIT) break
    end++
  }
  return end
}

/**
 * The first position after `from` where a piece starts whatever came before: just after a line break
 * and at a character that is not whitespace (no piece runs across that). `text.length` if none.
 */
export function nextCleanStart(text: string, from: number): number {
  const table = classTable()
  for (let index = from + 1; index < text.length; index++) {
    if (text.charCodeAt(index - 1) !== 10) continue
    const kind = table[text.charCodeAt(index)] as number
    if (kind === LETTER || kind === DIGIT || kind === OTHER) return index
  }
  return text.length
}
