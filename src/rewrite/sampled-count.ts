/**
 * A BPE count costs about 1.3 µs a character on the project's machine, the estimate a sixth of that
 * (BENCHMARKS.md, "Token counts"): a text longer than this is counted by the vocabulary on evenly
 * spaced samples, and the whole is its estimate at the samples' count ÷ estimate. A tool output of
 * one kind has the same density throughout; a mixed one is bounded by the rule's floor and prior.
 */
const sampleAboveChars = 2_048
const samples = 4
const sampleChars = 512

/**
 * `count` for texts up to the threshold; above it, `estimateWhole` of the whole scaled by `count` ÷
 * `estimate` on samples. `estimateWhole` may be a memoised estimate: the prompt's own estimate has just counted the whole.
 */
export function sampledCounter(
  count: (text: string) => number,
  estimate: (text: string) => number,
  estimateWhole: (text: string) => number = estimate,
): (text: string) => number {
  return (text) => {
    if (text.length <= sampleAboveChars) return count(text)
    const stride = (text.length - sampleChars) / (samples - 1)
    let counted = 0
    let estimated = 0
    for (let index = 0; index < samples; index++) {
      const piece = wholeCharacters(text, Math.round(index * stride), sampleChars)
      counted += count(piece)
      estimated += estimate(piece)
    }
    return Math.ceil((estimateWhole(text) * counted) / Math.max(1, estimated))
  }
}

/** About `length` characters from `start`, never beginning or ending inside a surrogate pair. */
function wholeCharacters(text: string, start: number, length: number): string {
  const isLow = (at: number): boolean => {
    const code = text.charCodeAt(at)
    return code >= 0xdc00 && code <= 0xdfff
  }
  const from = isLow(start) ? start + 1 : start
  const to = Math.min(text.length, from + length)
  return text.slice(from, isLow(to) ? to + 1 : to)
}
