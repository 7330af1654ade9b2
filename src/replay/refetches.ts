/**
 * Re-fetches in replay, counted the way the proxy counts them live (src/rewrite/refetch.ts, read
 * back from the same metric), beside the baseline of the recording itself: how often the agent
 * repeated a call with its whole context (docs/quality.md, "Re-fetches, counted live"). A
 * recording's calls do not react to what ctxgate hid, so a variant's count is the share of the
 * agent's own repeats that landed on a result ctxgate had cleared or folded, not a prediction.
 */
import type { Registry } from 'prom-client'
import { describeCall } from '../rewrite/clear-order.ts'
import { refetchWindow } from '../rewrite/refetch.ts'
import type { Conversation } from './conversation.ts'

export interface RefetchFigures {
  readonly count: number
  /** Estimated tokens of the results the re-fetches brought back. */
  readonly tokens: number
}

/** Calls that repeat an earlier call (same tool and input) or read a file read before, within the re-fetch window. */
export function repeatedCalls(conversation: Conversation): number {
  let repeats = 0
  let request = 0
  for (const messages of conversation.segments) {
    const lastSeen = new Map<string, number>()
    messages.forEach((message, position) => {
      if (message.role !== 'assistant') return
      // The k-th assistant reply answers request k; its calls are new in request k + 1.
      if (position > 0) request++
      for (const block of message.content) {
        if (block.type !== 'tool_use') continue
        const described = describeCall({ id: block.id, name: block.name, input: block.input })
        const keys = [described.key, ...(described.readPath === undefined ? [] : [`read:${described.readPath}`])]
        if (keys.some((key) => request - (lastSeen.get(key) ?? -Infinity) <= refetchWindow)) repeats++
        for (const key of keys) lastSeen.set(key, request)
      }
    })
  }
  return repeats
}

/** The proxy's own re-fetch counters, summed over providers and tools. */
export async function refetchFigures(registry: Registry): Promise<RefetchFigures> {
  const sum = async (name: string): Promise<number> =>
    ((await registry.getSingleMetric(name)?.get())?.values ?? []).reduce((total, { value }) => total + value, 0)
  return { count: await sum('ctxgate_refetches_total'), tokens: await sum('ctxgate_refetch_tokens_total') }
}
