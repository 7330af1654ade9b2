/**
 * The fake upstream's own token counter. It is deliberately unrelated to ctxgate's estimator, so
 * tests and replays check the estimator against a second opinion rather than against itself.
 * It splits text into word pieces the way BPE vocabularies roughly do: long letter runs in 6-letter
 * pieces, digits in threes, each symbol and each non-ASCII character on its own.
 */
const piece = /[A-Za-z]+|[0-9]+|[ \t]+|\n+|[!-~]|[\s\S]/g

export function countTextTokens(text: string): number {
  let tokens = 0
  let previousWasSingleSpace = false
  for (const match of text.matchAll(piece)) {
    const run = match[0]
    const first = run.charCodeAt(0)
    if (isLetter(first)) {
      tokens += Math.ceil(run.length / 6)
      // A single space before a word rides along with it, as in BPE vocabularies.
      if (previousWasSingleSpace) tokens -= 1
    } else if (first >= 48 && first <= 57) tokens += Math.ceil(run.length / 3)
    else if (first === 32 || first === 9) tokens += run.length === 1 ? 1 : Math.ceil(run.length / 4)
    else if (first === 10) tokens += 1
    else if (first < 128) tokens += 1
    else tokens += first >= 0xd800 && first <= 0xdbff ? 2 : 1
    previousWasSingleSpace = run === ' '
  }
  return tokens
}

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
}

/** Fixed cost of an image block, whatever its size (the mock does not decode images). */
export const imageTokens = 1_600
