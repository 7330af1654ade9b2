import { classTable, nextCleanStart, pieceEnd } from './cl100k-split.ts'

/** Distinct pieces remembered; past it the memo starts again (a piece costs one library count to relearn). */
const maxPieces = 200_000
/** Longer pieces (rare outside random text) are counted every time: the memo holds at most 200k × 64 characters. */
const maxPieceLength = 64

/**
 * cl100k_base's count of a text as the sum of its pieces' counts: the text is split by a class table
 * (cl100k-split.ts) and each distinct piece counted once by the library (`countPiece`), so a count
 * costs a split and a lookup per piece. Stretches whose split depends on an astral character go to
 * `countPiece` whole, up to the next line that starts clean. The sum is the library's own count:
 * its regex splits the text into the same pieces and counts each on its own.
 */
export function piecewiseCounter(countPiece: (text: string) => number): (text: string) => number {
  classTable()
  const memo = new Map<string, number>()
  const pieceCount = (piece: string): number => {
    if (piece.length > maxPieceLength) return countPiece(piece)
    const known = memo.get(piece)
    if (known !== undefined) return known
    const tokens = countPiece(piece)
    if (memo.size >= maxPieces) memo.clear()
    memo.set(piece, tokens)
    return tokens
  }
  return (text) => {
    let tokens = 0
    let start = 0
    while (start < text.length) {
      const end = pieceEnd(text, start)
      if (end > start) {
        // One ASCII character is one byte, and every byte is a token of its own: no lookup.
        tokens += end === start + 1 && text.charCodeAt(start) < 128 ? 1 : pieceCount(text.slice(start, end))
        start = end
        continue
      }
      const clean = nextCleanStart(text, start)
      tokens += countPiece(text.slice(start, clean))
      start = clean
    }
    return tokens
  }
}
