/**
 * Why ctxgate refuses a request target, or undefined when it may go upstream. Only origin-form
 * targets (an absolute URI must never choose the host: upstreams come from config), and no `.` or
 * `..` path segments, raw or percent-encoded: an upstream that normalises paths would read
 * `/prefix/v1/../../admin` as `/admin`, outside the configured base path.
 */
export function requestTargetProblem(target: string): string | undefined {
  if (!target.startsWith('/')) return 'ctxgate accepts only origin-form request targets (a path starting with "/")'
  if (hasDotSegment(pathOf(target)))
    return 'ctxgate refuses request paths with "." or ".." segments (also when percent-encoded)'
  return undefined
}

function pathOf(target: string): string {
  const query = target.indexOf('?')
  return query === -1 ? target : target.slice(0, query)
}

/** Decodes what a normalising server would read as a dot or a separator (`%2e`, `%2f`, `%5c`, `\`), then looks. */
function hasDotSegment(path: string): boolean {
  // A dot segment needs a dot, raw or as `%2e`: most paths hold neither, and are not copied to look.
  if (!mayHoldDot.test(path)) return false
  const decoded = path.replace(/%2e/gi, '.').replace(/%2f|%5c|\\/gi, '/')
  return decoded.split('/').some((segment) => segment === '.' || segment === '..')
}

const mayHoldDot = /[.%]/
