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

/**
 * A file read folded when a cut must take it (docs/quality.md, "A read folded to what the agent quotes"):
 * its lines are kept, verbatim and numbered as the tool printed them, up to this share of its characters.
 * On the older replay set at 64k, 0.35 left 86 events hidden, half 41 (6.5% more billed), 0.65 27 (11.7% more; BENCHMARKS.md, round 11).
 */
export const readFoldShare = 0.5

/** A longer line is minified code or data: rarely quoted whole, and it would crowd out the rest. */
const maxReadLineChars = 400

/** The line number a read tool prints before each line (Claude Code `  12→`, `cat -n` and editors `12\t`). */
const lineNumber = /^\s*\d+(?:→|\t)/

/** Markdown and plain-text documents: the agent quotes their code blocks, headings and tables, not their prose. */
function isProse(path: string): boolean {
  return /\.(?:md|markdown|mdx|rst|txt)$/i.test(path)
}

/**
 * The lines of a read a fold keeps: code, not prose. In a document, fenced code blocks and headings
 * first, then table rows and lines with inline code; in source, declarations first, then other code
 * lines; never blank lines or comments. Earlier lines first within a rank; in file order, at most
 * `readFoldShare` of the text. A rule of the text's shape, not of the strings the replay measure counts.
 */
export function quotableLines(lines: readonly string[], path: string): string[] {
  const ranks = isProse(path) ? documentRanks(lines) : sourceRanks(lines)
  const limit = (lines.reduce((sum, line) => sum + line.length + 1, 0) - 1) * readFoldShare
  const ranked = lines
    .map((line, at) => ({ line, at, rank: ranks[at] ?? 0 }))
    .filter((entry) => entry.rank > 0 && entry.line.length <= maxReadLineChars)
    .toSorted((a, b) => b.rank - a.rank || a.at - b.at)
  const kept: typeof ranked = []
  let chars = 0
  for (const entry of ranked) {
    if (chars + entry.line.length + 1 > limit) continue
    kept.push(entry)
    chars += entry.line.length + 1
  }
  return kept.toSorted((a, b) => a.at - b.at).map((entry) => entry.line)
}

const bodyOf = (line: string): string => line.replace(lineNumber, '')
const fence = /^(?:```|~~~)/
const heading = /^#{1,6}\s/

function documentRanks(lines: readonly string[]): number[] {
  let inFence = false
  return lines.map((line) => {
    const body = bodyOf(line).trim()
    if (fence.test(body)) {
      inFence = !inFence
      return 2
    }
    if (inFence || heading.test(body)) return 2
    return body.startsWith('|') || body.includes('`') ? 1 : 0
  })
}

const comment = /^(?:\/\/|#|\*|\/\*)/
const codePunctuation = /[;{}()=[\]<>]|=>|::/
const codeWord =
  /^(?:import|export|from|return|if|elif|else|for|while|def|class|const|let|var|function|async|await|private|public|protected|static|interface|type|enum|struct|fn|pub|impl|package|func|try|catch|except|raise|throw|with|@\w+)\b/
const declaration =
  /^(?:export\s+)?(?:default\s+)?(?:(?:public|private|protected|static|readonly|abstract|async)\s+)*(?:function\*?|class|const|let|var|interface|type|enum|def|struct|fn|func|impl|trait|module|namespace)\s+[A-Za-z_$]|^(?:(?:public|private|protected|static|readonly|async|get|set)\s+)+[A-Za-z_$][\w$]*\s*[(<:=]|^(?:import|from)\s/

function sourceRanks(lines: readonly string[]): number[] {
  return lines.map((line) => {
    const body = bodyOf(line).trim()
    if (body === '' || comment.test(body)) return 0
    if (declaration.test(body)) return 2
    return codePunctuation.test(body) || codeWord.test(body) ? 1 : 0
  })
}
