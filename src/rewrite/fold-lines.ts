/**
 * The lines of a tool output that a fold keeps whole (docs/quality.md, "Folds keep the lines the
 * agent quotes"): those naming the most distinctive strings — paths, identifiers with `_` or
 * camelCase, error lines. Replay shows the agent goes back to a folded output for exactly those
 * (a path to open, a failing test's name, the line an Edit quotes), and a summary of the first
 * line alone keeps none of them.
 */

/** At most this many lines: at 64k 8 took the long replay set from 203 events to 179 (0.506× → 0.517× careful direct), 16 to 169 at 0.549× (BENCHMARKS.md). */
export const maxKeptLines = 8

/** A longer line is a blob (minified code, a data row): rarely quoted whole, and it would crowd out the rest. */
const maxLineChars = 200

/** The kept lines together stay under this share of the output, so a fold of a short output still saves most of it. */
const maxKeptShare = 0.25

/**
 * …and under this many characters: every later request carries them. Without it Claude Code's 150-step
 * loop billed 0.990× direct against 0.944× with it; the replays at 64k kept the same events (BENCHMARKS.md).
 */
const maxKeptChars = 600

/** The kept lines, in their order in the output, trimmed; none when no line names anything distinctive. */
export function linesToKeep(lines: readonly string[], totalChars: number): string[] {
  const ranked = lines
    .map((line, at) => ({ line: line.trim(), at, score: distinctiveScore(line) }))
    .filter((entry) => entry.score > 0 && entry.line.length <= maxLineChars)
    .toSorted((a, b) => b.score - a.score || a.at - b.at)
  const kept: typeof ranked = []
  let chars = 0
  for (const entry of ranked) {
    if (kept.length === maxKeptLines) break
    if (chars + entry.line.length > Math.min(totalChars * maxKeptShare, maxKeptChars)) continue
    kept.push(entry)
    chars += entry.line.length
  }
  return kept.toSorted((a, b) => a.at - b.at).map((entry) => entry.line)
}

const wordOrPath = /[\w.@+-]+(?:\/[\w.@+-]+)+|[A-Za-z_$][\w$]*/g
const errorWord = /\b(?:error|fail(?:ed|ure|s)?|exception|traceback|assert(?:ion)?)\b/i

/** Paths count twice, identifiers once (snake_case or camelCase, 6 characters or more, as the measure takes them), an error word twice. */
export function distinctiveScore(line: string): number {
  let score = 0
  for (const match of line.matchAll(wordOrPath)) {
    const word = match[0]
    if (word.includes('/')) score += 2
    else if (word.length >= 6 && (/[a-z][A-Z]/.test(word) || /[A-Za-z0-9]_[A-Za-z0-9]/.test(word))) score += 1
  }
  return errorWord.test(line) ? score + 2 : score
}
