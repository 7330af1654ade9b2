/**
 * A fast token estimate for text of any kind, meant to err high (docs/rewriting.md, estimates): one
 * pass over char codes counting features that track BPE tokens — ASCII word runs, case and digit
 * switches inside a run (hex, base64, camelCase), punctuation, line breaks, and characters per
 * script — each with a conservative weight.
 */
const classOf = new Uint8Array(65_536)
const LOWER = 1
const UPPER = 2
const DIGIT = 3
const SPACE = 4
const NEWLINE = 5
const PUNCT = 6
const CJK = 7
const OTHER_SCRIPT = 8
const SURROGATE = 9

for (let code = 0; code < 65_536; code++) classOf[code] = classify(code)

function classify(code: number): number {
  if (code >= 97 && code <= 122) return LOWER
  if (code >= 65 && code <= 90) return UPPER
  if (code >= 48 && code <= 57) return DIGIT
  if (code === 32 || code === 9) return SPACE
  if (code === 10 || code === 13) return NEWLINE
  if (code < 128) return PUNCT
  if (
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0x3400 && code <= 0x9fff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xff00 && code <= 0xffef)
  )
    return CJK
  if (code >= 0xd800 && code <= 0xdfff) return SURROGATE
  return OTHER_SCRIPT
}

/** Weights per feature, chosen high: a too-big estimate trims early; a too-small one gets refused. */
export const weights = {
  wordRun: 0.9,
  wordChar: 0.13,
  switch: 0.65,
  punct: 0.85,
  newline: 0.6,
  extraSpace: 0.3,
  cjk: 1.25,
  otherScript: 0.75,
  astral: 1.5,
  /**
   * Per character of a long run as random as base64 or hex (a case or digit switch every few
   * characters): BPE vocabularies split such runs into pieces of 1.4–1.8 characters (docs/estimates.md).
   */
  randomRunChar: 0.75,
} as const

/** A run this long with a switch every four characters or more often is random, not words. */
const randomRunMinLength = 16
const randomRunCharsPerSwitch = 4
// Module constants: read in the loop once per character, cheaper than the object's properties.
const { wordRun, wordChar, punct, newline, extraSpace, cjk, otherScript, astral } = weights
const switchWeight = weights.switch

export function estimateTextTokens(text: string): number {
  let tokens = 0
  let previous = 0
  // The current word run: where it started, the estimate before it, its switches.
  let runStart = 0
  let beforeRun = 0
  let runSwitches = 0
  for (let index = 0; index < text.length; index++) {
    const kind = classOf[text.charCodeAt(index)] as number
    if (kind <= DIGIT) {
      if (previous > DIGIT || previous === 0) {
        runStart = index
        beforeRun = tokens
        runSwitches = 0
        tokens += wordRun
      } else if (previous !== kind && !(previous === UPPER && kind === LOWER)) {
        runSwitches++
        tokens += switchWeight
      }
      tokens += wordChar
    } else {
      // A word run just ended: only one with switches and some length can be random.
      if (previous <= DIGIT && runSwitches > 0 && index - runStart >= randomRunMinLength)
        tokens += randomRunExtra(index - runStart, runSwitches, tokens - beforeRun)
      if (kind === SPACE) {
        if (previous === SPACE) tokens += extraSpace
      } else if (kind === NEWLINE) tokens += newline
      else if (kind === PUNCT) tokens += punct
      else if (kind === CJK) tokens += cjk
      else if (kind === OTHER_SCRIPT) tokens += otherScript
      else tokens += astral / 2
    }
    previous = kind
  }
  if (previous !== 0 && previous <= DIGIT && runSwitches > 0 && text.length - runStart >= randomRunMinLength)
    tokens += randomRunExtra(text.length - runStart, runSwitches, tokens - beforeRun)
  return Math.ceil(tokens)
}

/** What a random run costs beyond its word features: words split rarely, random strings every couple of characters. */
function randomRunExtra(length: number, runSwitches: number, asWords: number): number {
  if (runSwitches * randomRunCharsPerSwitch < length) return 0
  return Math.max(0, length * weights.randomRunChar - asWords)
}
