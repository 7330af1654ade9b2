/**
 * Claude Code records a failed API call (an overload, a 529) as an assistant message of its own,
 * `API Error: 529 …`, flagged `isApiErrorMessage` with model `<synthetic>`. The model never wrote
 * it and Claude Code never sends it back, so a replay must not either.
 */
export function isSyntheticApiError(line: Readonly<Record<string, unknown>>): boolean {
  if (line['type'] !== 'assistant') return false
  if (line['isApiErrorMessage'] === true) return true
  const message = line['message']
  return (
    typeof message === 'object' && message !== null && (message as Record<string, unknown>)['model'] === '<synthetic>'
  )
}

export function syntheticErrorNote(count: number): string {
  return `${count} synthetic "API Error" message(s) Claude Code wrote itself were skipped (the model never sent them)`
}
