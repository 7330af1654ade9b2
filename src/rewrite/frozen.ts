import type { ChatView, FrozenDecisions, FrozenResult, RestoredResult } from './types.ts'

/** The stored decisions as a Map of own entries; a malformed store entry counts as none. */
export function frozenResults(decisions: FrozenDecisions): Map<string, FrozenResult> {
  const results: unknown = decisions.results
  if (typeof results !== 'object' || results === null) return new Map()
  return new Map(Object.entries(results as Record<string, FrozenResult>))
}

/** First message still sent after a frozen drop that matches the client's history; undefined when there is none. */
export function frozenDropKeepFrom(decisions: FrozenDecisions, view: ChatView): number | undefined {
  const drop = decisions.drop
  if (!drop || typeof drop.keepFrom !== 'number') return undefined
  return view.messages[drop.keepFrom]?.hash === drop.hash ? drop.keepFrom : undefined
}

/** The results restored on use, as a Map of own entries; a malformed store entry counts as none. */
export function restoredResults(decisions: FrozenDecisions): Map<string, RestoredResult> {
  const restored: unknown = decisions.restored
  if (typeof restored !== 'object' || restored === null) return new Map()
  return new Map(
    Object.entries(restored as Record<string, RestoredResult>).filter(
      ([, entry]) => typeof entry === 'object' && entry !== null && typeof entry.hash === 'string',
    ),
  )
}
