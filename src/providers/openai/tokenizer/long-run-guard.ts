/**
 * BPE counting is quadratic in the length of one pre-tokenizer piece: a long run of letters, of
 * punctuation or of whitespace with nothing to split it (`"a".repeat(100_000)` takes seconds in every
 * JavaScript BPE library; see docs/estimates.md). Cutting such a run into short chunks and counting
 * each keeps the cost linear, at most about one token off per cut.
 */
const maxRun = 256

const LETTER = 1
const PUNCT = 2
const SPACE = 3
/** Digits split into groups of at most three in o200k and cl100k: a run of them is never one piece. */
const NEVER_ONE_PIECE = 4

function classOf(code: number): number {
  if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) return LETTER
  if (code >= 48 && code <= 57) return NEVER_ONE_PIECE
  if (code === 32 || code === 9 || code === 10 || code === 13) return SPACE
  if (code < 128) return PUNCT
  // Other scripts, CJK included, are letters to the pre-tokenizer; symbols and emoji are rarer in long runs.
  return LETTER
}

/** `classOf` for ASCII, read once per character: a lookup, not four comparisons. */
const asciiClass = Uint8Array.from({ length: 128 }, (_, code) => classOf(code))

/** The count of `text` by `count`, with every run longer than `maxRun` of one class counted in chunks. */
export function countWithRunGuard(text: string, count: (piece: string) => number): number {
  if (text.length <= maxRun) return count(text)
  let total = 0
  let start = 0
  let runClass = 0
  let runLength = 0
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    const kind = code < 128 ? (asciiClass[code] as number) : LETTER
    if (kind !== runClass) {
      runClass = kind
      runLength = 1
      continue
    }
    if (++runLength <= maxRun || kind === NEVER_ONE_PIECE) continue
    // Never cut between the two halves of a surrogate pair: each half alone would count as a replacement character.
    if (code < 0xdc00 || code > 0xdfff) {
      total += count(text.slice(start, index))
      start = index
      runLength = 1
    }
  }
  return total + count(text.slice(start))
}
