/** How a table's columns line up: which read left (names), the rest right (numbers). */
export interface ColumnLayout {
  readonly leftAligned: (column: number) => boolean
  /** Drop the padding after the last cell of each terminal line. */
  readonly trimEnd?: boolean
}

/** Text cells under their titles: aligned with spaces for the terminal, or as a Markdown table. */
export function renderCells(
  titles: readonly string[],
  cells: readonly (readonly string[])[],
  markdown: boolean,
  layout: ColumnLayout,
): string {
  if (markdown) {
    const head = `| ${titles.join(' | ')} |`
    const rule = `|${titles.map((_, index) => (layout.leftAligned(index) ? '---' : '---:')).join('|')}|`
    return [head, rule, ...cells.map((line) => `| ${line.join(' | ')} |`)].join('\n')
  }
  const widths = titles.map((title, index) =>
    Math.max(title.length, ...cells.map((line) => (line[index] ?? '').length)),
  )
  const line = (values: readonly string[]): string => {
    const text = values
      .map((value, index) =>
        layout.leftAligned(index) ? value.padEnd(widths[index] as number) : value.padStart(widths[index] as number),
      )
      .join('  ')
    return layout.trimEnd ? text.trimEnd() : text
  }
  return [line(titles), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n')
}
