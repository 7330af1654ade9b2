/** The first value of a header Node may have split into several (`set-cookie`-style arrays). */
export function firstHeader(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' || value === undefined ? value : value[0]
}
