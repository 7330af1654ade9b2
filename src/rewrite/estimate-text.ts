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
  /** BPE vocabularies split numbers into groups of at most three digits: each group after a number's first. */
  digitGroup: 0.6,
  /** A space before a number is a token of its own: vocabularies merge a leading space into words, not digits. */
  spaceBeforeDigits: 1,
} as const

/** A run this long with a switch every four characters or more often is random, not words. */
const randomRunMinLength = 16
const randomRunCharsPerSwitch = 4

export function estimateTextTokens(text: string): number {
  let wordRuns = 0
  let wordChars = 0
  let switches = 0
  let punct = 0
  let newlines = 0
  let extraSpaces = 0
  let cjk = 0
  let otherScript = 0
  let surrogates = 0
  let randomRunExtra = 0
  let runStart = 0
  let runSwitches = 0
  let digitGroups = 0
  let runDigitGroups = 0
  let spacesBeforeDigits = 0
  let digitsInRun = 0
  let previous = 0
  for (let index = 0; index < text.length; index++) {
    const kind = classOf[text.charCodeAt(index)] as number
    if (kind <= DIGIT) {
      wordChars++
      if (previous > DIGIT || previous === 0) {
        wordRuns++
        runStart = index
        runSwitches = 0
        runDigitGroups = 0
      } else if (previous !== kind && !(previous === UPPER && kind === LOWER)) {
        switches++
        runSwitches++
      }
      if (kind === DIGIT) {
        if (previous !== DIGIT) {
          digitsInRun = 0
          if (previous === SPACE) spacesBeforeDigits++
        } else if (++digitsInRun % 3 === 0) {
          digitGroups++
          runDigitGroups++
        }
      }
      previous = kind
      continue
    }
    if (previous !== 0 && previous <= DIGIT)
      randomRunExtra += randomRunCorrection(index - runStart, runSwitches, runDigitGroups)
    if (kind === SPACE) {
      if (previous === SPACE) extraSpaces++
    } else if (kind === NEWLINE) newlines++
    else if (kind === PUNCT) punct++
    else if (kind === CJK) cjk++
    else if (kind === OTHER_SCRIPT) otherScript++
    else surrogates++
    previous = kind
  }
  if (previous !== 0 && previous <= DIGIT)
    randomRunExtra += randomRunCorrection(text.length - runStart, runSwitches, runDigitGroups)
  return Math.ceil(
    wordRuns * weights.wordRun +
      wordChars * weights.wordChar +
      switches * weights.switch +
      punct * weights.punct +
      newlines * weights.newline +
      extraSpaces * weights.extraSpace +
      cjk * weights.cjk +
      otherScript * weights.otherScript +
      (surrogates / 2) * weights.astral +
      digitGroups * weights.digitGroup +
      spacesBeforeDigits * weights.spaceBeforeDigits +
      randomRunExtra,
  )
}

/** What a random run costs beyond its word features: words split rarely, random strings every couple of characters. */
function randomRunCorrection(length: number, runSwitches: number, runDigitGroups: number): number {
  if (length < randomRunMinLength || runSwitches * randomRunCharsPerSwitch < length) return 0
  const asWords =
    weights.wordRun + length * weights.wordChar + runSwitches * weights.switch + runDigitGroups * weights.digitGroup
  return Math.max(0, length * weights.randomRunChar - asWords)
}
