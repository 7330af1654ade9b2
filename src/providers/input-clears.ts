import type { Edit } from '../rewrite/types.ts'

/** The cleared inputs of a request's edits by call id (cleared-input.ts); empty when it clears none. */
export function inputClears(edits: readonly Edit[]): ReadonlyMap<string, unknown> {
  const clears = new Map<string, unknown>()
  for (const edit of edits) if (edit.kind === 'clear-tool-input') clears.set(edit.id, edit.input)
  return clears
}
