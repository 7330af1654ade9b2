/**
 * Re-fetches: calls the agent makes again after ctxgate cleared or folded their result — the same
 * tool with the same input, or a read of the same file — within a few requests of the edit. The
 * agents in the replay sets repeat identical calls even with their whole context (docs/quality.md),
 * so the count is compared with that baseline, not with zero.
 */
import { callsOfView, describeCall } from './clear-order.ts'
import type { ChatView, FrozenDecisions, FrozenResult } from './types.ts'

export interface Refetch {
  readonly tool: string
  /** Estimated tokens of the result the call brought back. */
  readonly tokens: number
}

/** Requests after an edit within which a repeated call counts as its re-fetch. */
export const refetchWindow = 20

export interface RefetchInput {
  readonly view: ChatView
  /** Decisions the previous request left (what the agent saw cleared or folded). */
  readonly decisions: FrozenDecisions
  /** Messages before this index were in the previous request: calls after it are new. */
  readonly newFrom: number
  /** This request's number in its session (1 for the first). */
  readonly request: number
}

export function findRefetches(input: RefetchInput): Refetch[] {
  const edited = Object.entries(input.decisions.results as Record<string, FrozenResult>)
  if (edited.length === 0 || input.newFrom >= input.view.messages.length) return []
  const recent = new Set(
    edited
      .filter(
        ([, decision]) =>
          input.request - (typeof decision.at === 'number' ? decision.at : input.request) <= refetchWindow,
      )
      .map(([id]) => id),
  )
  if (recent.size === 0) return []
  const keys = new Set<string>()
  const paths = new Set<string>()
  const fresh: { id: string; name: string; key: string; readPath?: string }[] = []
  let index = 0
  for (const message of input.view.messages) {
    const calls = callsOfView([message])
    for (const call of calls) {
      const described = describeCall(call)
      if (index < input.newFrom) {
        if (!recent.has(call.id)) continue
        keys.add(described.key)
        if (described.readPath !== undefined) paths.add(described.readPath)
      } else fresh.push({ id: call.id, name: call.name, ...described })
    }
    index++
  }
  if (fresh.length === 0) return []
  const tokens = resultTokens(input.view)
  return fresh
    .filter((call) => keys.has(call.key) || (call.readPath !== undefined && paths.has(call.readPath)))
    .map((call) => ({ tool: call.name || 'unknown', tokens: tokens.get(call.id) ?? 0 }))
}

function resultTokens(view: ChatView): Map<string, number> {
  const tokens = new Map<string, number>()
  for (const message of view.messages) for (const result of message.toolResults) tokens.set(result.id, result.tokens)
  return tokens
}
