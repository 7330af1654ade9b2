/**
 * Turns node:util parseArgs failures into one line a person can act on, with the nearest real
 * option when the unknown one looks like a typo ("did you mean --metrics-port?").
 */
export function explainParseError(error: unknown, known: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error)
  const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(message)?.[1]
  if (unknown === undefined) return message.split('\n')[0] ?? message
  const nearest = nearestOption(unknown.replace(/^-+/, ''), known)
  return `unknown option ${unknown}${nearest ? ` (did you mean --${nearest}?)` : ''}`
}

/** The known option closest to a mistyped one, if it is close enough to be a plausible typo. */
export function nearestOption(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of known) {
    const distance = editDistance(typed.toLowerCase(), candidate)
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance]
  }
  // A third of the length (at least 2 edits) separates a typo from a different word.
  const allowed = Math.max(2, Math.floor(typed.length / 3))
  const prefixOf = best !== undefined && typed.length >= 3 && best.startsWith(typed.toLowerCase())
  return best !== undefined && (bestDistance <= allowed || prefixOf) ? best : undefined
}

/** Levenshtein distance with adjacent transpositions counted as one edit. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_row, i) =>
    Array.from({ length: b.length + 1 }, (_column, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, at(i - 2, j - 2) + 1)
      ;(rows[i] as number[])[j] = value
    }
  }
  return at(a.length, b.length)
}
