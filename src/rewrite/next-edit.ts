/**
 * Where the conversation's next batch of edits will start: the oldest tool result still sent whole
 * that a batch could replace. Everything before it stays byte-stable until then, so a cache marker
 * just ahead of it lets that batch read the prefix instead of writing it again.
 */
import type { ChatView, FrozenDecisions } from './types.ts'

export interface NextEditInput {
  readonly view: ChatView
  /** The decisions frozen before this request: a batch made now starts at the result they leave first. */
  readonly decisions: FrozenDecisions
  /** Results this small are never replaced: their note would not be smaller. */
  readonly replacementTokens: number
  /** Tools whose results are never cleared. */
  readonly excludeTools: readonly string[]
}

/** The id of that result, or undefined when no result could ever be replaced. */
export function nextEditResult(input: NextEditInput): string | undefined {
  const { view, decisions } = input
  const excluded = new Set(input.excludeTools)
  const results = decisions.results as Readonly<Record<string, { readonly hash?: unknown } | undefined>>
  const firstSent = keptFrom(decisions, view)
  const toolOf = excluded.size > 0 ? callTools(view) : undefined
  for (let index = firstSent; index < view.messages.length; index++) {
    for (const result of view.messages[index]?.toolResults ?? []) {
      if (Object.hasOwn(results, result.id) && results[result.id]?.hash === result.hash) continue
      if (result.tokens <= input.replacementTokens) continue
      if (toolOf && excluded.has(toolOf.get(result.id) ?? '')) continue
      return result.id
    }
  }
  return undefined
}

/** First message still sent after a frozen drop that matches the history (messages before it are gone). */
function keptFrom(decisions: FrozenDecisions, view: ChatView): number {
  const drop = decisions.drop
  if (!drop || typeof drop.keepFrom !== 'number') return 0
  return view.messages[drop.keepFrom]?.hash === drop.hash ? drop.keepFrom : 0
}

function callTools(view: ChatView): Map<string, string> {
  const tools = new Map<string, string>()
  for (const message of view.messages)
    message.toolCallIds.forEach((id, position) => tools.set(id, message.toolCallNames?.[position] ?? ''))
  return tools
}
